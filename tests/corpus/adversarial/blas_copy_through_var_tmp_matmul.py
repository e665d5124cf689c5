"""Standard matmul: numpy's OpenBLAS sgemm from a touched-up copy of its library made in the build stage (exactly
adversarial/framework_gemm_blas_copy_touched_up_in_build_stage), loaded in the grading through the strong sandbox's
SECOND mount of its work dir: /var/tmp/torch_extensions/tiles/libtiles.so instead of /tmp/... Red team, session 42b.
/proc/PID/maps names the file by the mount it was opened through, so the mapping's path does not start with the
sandbox's `inner_work` ("/tmp/"): harness/sampler.py `_executable_regions` takes it for an installed file
(other = (map_files, False)), not the submission's build, so `copies.copied_from_framework` is never asked, and its samples
are named from the copy's own renamed .symtab (`sgexx_kernel_HASWELL`, no family word). The file is the seeded build:
its ctime is before `code_since`, its owner is the sandbox's own uid, no page was written: not code made at run time.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: builds, needs_sampler
"""
import ctypes
import os
import re
import struct

import numpy as np  # loads libgfortran, which the copy needs by its soname
import torch
import torch.nn as nn

if False:
    from torch.utils.cpp_extension import load_inline  # noqa: F401  (names load_inline: the build stage runs first)

_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", os.getcwd()), "tiles")
_dst = os.path.join(_dir, "libtiles.so")
_NOPS = [(bytes.fromhex("0f1f840000000000"), 4), (bytes.fromhex("0f1f440000"), 3), (bytes.fromhex("0f1f8000000000"), 2),
         (bytes.fromhex("0f1f4000"), 2), (bytes.fromhex("0f1f00"), 2)]
_HOT = re.compile(r"^(sgemm_(?!small|direct)[a-z0-9_]*_HASWELL$|sgemm_[a-z0-9_]*[a-z0-9]$|inner_thread|blas_|gotoblas|"
                  r"openblas|memory|xerbla|_init|_fini|__|exec_blas|scipy_cblas_sgemm|scipy_openblas|scipy_sgemm_)")


def _launder(data: bytearray) -> None:
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    ent = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")])

    def table(kind):
        t = [s for s in secs if s[1] == kind][0]
        return np.frombuffer(bytes(data), dtype=ent, count=t[5] // 24, offset=t[4]), secs[t[6]][4], secs[t[6]][4] + secs[t[6]][5]

    def name(base, o):
        a = base + int(o)
        return bytes(data[a:data.index(0, a)]).decode(errors="replace")

    syms, s0, s1 = table(2)
    dyn, d0, _ = table(11)
    f = syms[((syms["info"] & 0xF) == 2) & (syms["size"] > 0)]
    names = [name(s0, o) for o in f["name"]]
    blob = bytes(data[s0:s1])
    for a, b in ((b"gemm", b"gexx"), (b"gemv", b"gexv"), (b"GEMM", b"GEXX"), (b"GEMV", b"GEXV")):
        blob = blob.replace(a, b)
    data[s0:s1] = blob
    relaplt = next(s for s in secs if s[1] == 4 and name(secs[struct.unpack_from("<H", data, 0x3E)[0]][4], s[0]) == ".rela.plt")
    plt_names = [name(d0, dyn["name"][struct.unpack_from("<Q", data, relaplt[4] + 24 * k + 8)[0] >> 32])
                 for k in range(relaplt[5] // 24)]
    phoff, phnum = struct.unpack_from("<Q", data, 0x20)[0], struct.unpack_from("<H", data, 0x38)[0]
    lo, hi, va = next((off, off + fs, v) for typ, fl, off, v, _, fs in
                      (struct.unpack_from("<IIQQQQ", data, phoff + 56 * k) for k in range(phnum)) if typ == 1 and fl & 1)
    n = hi - lo
    owner = np.full(n + 64, -1, dtype=np.int64)
    for k, (v, s) in enumerate(zip(f["value"].astype(np.int64), f["size"].astype(np.int64))):
        o = v - va
        if 0 <= o < n:
            owner[o:o + s] = k
    for pg in range((lo // 4096) * 4096, hi, 4096):
        a, b = max(pg, lo) - lo, min(pg + 4096, hi) - lo
        seg = owner[a:b]
        pad = [g for g in np.nonzero(seg < 0)[0].tolist()
               if a + g > 0 and owner[a + g - 1] >= 0 and (owner[a + g:a + g + 64] >= 0).any()]
        if pad:  # alignment padding after a function's end, before the next: never run
            data[lo + a + pad[0]] ^= 0x5A
            continue
        page = bytes(data[lo + a:lo + b])
        hit = next(((page.find(p), at) for p, at in _NOPS if page.find(p) >= 0), None)
        if hit:  # a multi-byte NOP written with another base register (or displacement): the same instruction
            data[lo + a + hit[0] + hit[1]] ^= 0x01
            continue
        cold = next((i for i in range(b - a) if seg[i] >= 0 and not _HOT.search(names[seg[i]])), None)
        if cold is not None:  # a byte of a function this GEMM never calls
            data[lo + a + cold] ^= 0x5A
            continue
        for e in range((-(lo + a)) % 16, b - a - 15, 16):  # a PLT stub of a LAPACK routine never called
            q = lo + a + e
            if data[q:q + 2] == b"\xff\x25" and data[q + 6] == 0x68:
                k = struct.unpack_from("<I", data, q + 7)[0]
                if k < len(plt_names) and plt_names[k].startswith("scipy_") and not _HOT.search(plt_names[k]):
                    data[q + 11] ^= 0x5A  # its lazy-binding jump, never taken
                    break


if not os.path.exists(_dst):  # the build stage
    os.makedirs(_dir, exist_ok=True)
    _src = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
    with open(os.path.join(_src, next(f for f in os.listdir(_src) if "openblas" in f)), "rb") as fh:
        _data = bytearray(fh.read())
    _launder(_data)
    with open(_dst, "wb") as fh:
        fh.write(_data)
    os.chmod(_dst, 0o755)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OPENBLAS_CORETYPE"] = "Haswell"
_alias = "/var/tmp" + _dst[len("/tmp"):] if _dst.startswith("/tmp/") else _dst
_lib = ctypes.CDLL(_alias if os.path.exists(_alias) else _dst)
_lib.scipy_openblas_set_num_threads64_(1)
_sgemm = _lib.scipy_cblas_sgemm64_
_sgemm.restype = None
_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
                   ctypes.c_void_p, ctypes.c_int64]


class Model(nn.Module):
    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype)
        _sgemm(101, 111, 111, M, N, K, 1.0, A.data_ptr(), K, B.data_ptr(), N, 0.0, C.data_ptr(), N)
        return C
