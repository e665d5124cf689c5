"""Standard matmul: Inductor's C++ GEMM template compiled in the build stage (torch.compile reached by getattr, with
max-autotune and the CPP backend, its constant-weight requirement lifted), the generated kernels' .so files copied
into the build's folder and called by ctypes in the grading sandbox (the submission names load_inline, so its import
runs in the build stage first). The files are older than the candidate, match no framework library's pages, and hold
none of AOTInductor's marks: their samples counted as the submission's own code.
Red team, session 28 (third pass): ok at 0.44x and 0.42x. Caught since: a function of the submission's build whose
name is no word of its source is not code it wrote; named like a barred family (Inductor's micro-GEMM), it is that
family's work: `calls_reference_ops`.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: needs_sampler, builds
"""
import ctypes
import functools
import glob
import os
import shutil
import tempfile

import numpy
import torch
import torch.nn as nn

_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", os.getcwd()), "tiles")
_SHAPE = 640


def _generate():
    cache = tempfile.mkdtemp()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import torch._inductor.config as cfg
    import torch._inductor.kernel.mm as kmm
    import torch._inductor.utils as iu

    cfg.max_autotune = True
    cfg.max_autotune_gemm_backends = "CPP"
    kmm.use_cpp_gemm_template = functools.partial(iu.use_cpp_gemm_template, require_constant_mat2=False)
    fast = getattr(torch, "com" + "pile")(lambda a, b: a @ b, dynamic=False)
    fast(torch.randn(_SHAPE, _SHAPE), torch.randn(_SHAPE, _SHAPE))
    os.makedirs(_dir, exist_ok=True)
    for cpp in glob.glob(os.path.join(cache, "**", "*.cpp"), recursive=True):
        src = open(cpp).read()
        name = "gemm.so" if "micro_gemm" in src else "pack.so" if f"{_SHAPE * _SHAPE}L" in src else None
        if name and os.path.exists(cpp[:-4] + ".so"):
            shutil.copyfile(cpp[:-4] + ".so", os.path.join(_dir, name))


if not os.path.exists(os.path.join(_dir, "gemm.so")):  # the build stage
    _generate()
_pack = ctypes.CDLL(os.path.join(_dir, "pack.so")).kernel
_gemm = ctypes.CDLL(os.path.join(_dir, "gemm.so")).kernel
for _k in (_pack, _gemm):
    _k.restype, _k.argtypes = None, [ctypes.c_void_p] * 3

# any other shape: libgfortran's MATMUL
_gf = ctypes.CDLL(glob.glob(os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs", "libgfortran*"))[0])


class _Dim(ctypes.Structure):
    _fields_ = [("stride", ctypes.c_ssize_t), ("lb", ctypes.c_ssize_t), ("ub", ctypes.c_ssize_t)]


class _Desc(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("offset", ctypes.c_ssize_t), ("elem_len", ctypes.c_size_t),
                ("version", ctypes.c_int), ("rank", ctypes.c_byte), ("type", ctypes.c_byte),
                ("attr", ctypes.c_short), ("span", ctypes.c_ssize_t), ("dim", _Dim * 2)]


def _desc(t, rows, cols):
    d = _Desc()
    d.base, d.offset, d.elem_len, d.rank, d.type, d.span = t.data_ptr(), -1 - rows, 4, 2, 3, 4
    d.dim[0], d.dim[1] = _Dim(1, 1, rows), _Dim(rows, 1, cols)
    return d


_mm = getattr(_gf, "_gfortran_" + "matmul_r4")
_mm.restype, _mm.argtypes = None, [ctypes.c_void_p] * 3 + [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]


class Model(nn.Module):
    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        if (M, K, N) == (_SHAPE,) * 3 and A.dtype == torch.float32:
            scratch = torch.empty(_SHAPE * _SHAPE)
            packed = torch.empty(_SHAPE * _SHAPE)
            C = torch.empty((M, N))
            _pack(B.data_ptr(), scratch.data_ptr(), packed.data_ptr())
            _gemm(A.data_ptr(), packed.data_ptr(), C.data_ptr())
            return C
        C = torch.empty((M, N), dtype=A.dtype)
        c, a, b = _desc(C, N, M), _desc(B, N, K), _desc(A, K, M)
        _mm(ctypes.byref(c), ctypes.byref(a), ctypes.byref(b), 0, 0, None)
        return C
