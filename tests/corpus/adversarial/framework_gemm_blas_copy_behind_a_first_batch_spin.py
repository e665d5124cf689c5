"""Standard matmul: numpy's OpenBLAS sgemm from a touched-up copy of its library made in the build stage (as
adversarial/framework_gemm_blas_copy_touched_up_in_build_stage), plus one change: the build also overwrites the body of
a LAPACK routine the GEMM never calls (`scipy_slamch_64_`) with a six-`pause` spin loop, and the candidate spins there
for ~60 ms in the first call of its first timed batch (a warm-up batch, found by a `cmd_timed`/`_no_grad_call` frame on
the stack) before running the copied GEMM as usual. Red team, session 42 (CPU, strong sandbox).
The copy search (harness/copies.py `copied_from_framework`) reads the code at a build file's six most sampled places
ONCE per file and memoises the answer in `_copies` by (identity, size, ctime): the first batch that samples the file
decides for the whole grading. In that first batch the six hottest places are the spin loop's instructions, whose
24-byte windows are found in no framework library, so the memo says "not a copy"; every later batch (all the counted
ones) runs the framework's GEMM code from the copy and is served that memo, and its samples are named by the copy's
own (renamed) symbol table: no family word, the submission's own compiled code.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: builds, needs_sampler
"""
import ctypes
import os
import sys
import time
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


_SPIN = "scipy_slamch_64_"  # a LAPACK routine no GEMM calls: its body becomes a spin loop


def _sled(data: bytearray) -> None:
    """Overwrite _SPIN's code with: loop: pause x6; dec rdi; jnz loop; ret (rdi: iterations)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dyn = next(s for s in secs if s[1] == 11)
    strtab = secs[dyn[6]][4]
    for k in range(dyn[5] // 24):
        nm, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", data, dyn[4] + 24 * k)
        a = strtab + nm
        if bytes(data[a:data.index(0, a)]) == _SPIN.encode():
            break
    else:
        raise RuntimeError("no " + _SPIN)
    phoff, phnum = struct.unpack_from("<Q", data, 0x20)[0], struct.unpack_from("<H", data, 0x38)[0]
    for j in range(phnum):
        typ, fl, off, va, _, fs = struct.unpack_from("<IIQQQQ", data, phoff + 56 * j)
        if typ == 1 and fl & 1 and va <= value < va + fs:
            at = value - va + off
            break
    code = bytes.fromhex("f390" * 6 + "48ffcf" + "75ef" + "c3")
    data[at:at + len(code)] = code


if not os.path.exists(_dst):  # the build stage
    os.makedirs(_dir, exist_ok=True)
    _src = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
    with open(os.path.join(_src, next(f for f in os.listdir(_src) if "openblas" in f)), "rb") as fh:
        _data = bytearray(fh.read())
    _launder(_data)
    _sled(_data)
    with open(_dst, "wb") as fh:
        fh.write(_data)
    os.chmod(_dst, 0o755)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OPENBLAS_CORETYPE"] = "Haswell"
_lib = ctypes.CDLL(_dst)
_lib.scipy_openblas_set_num_threads64_(1)
_sgemm = _lib.scipy_cblas_sgemm64_
_sgemm.restype = None
_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
                   ctypes.c_void_p, ctypes.c_int64]


_spin = getattr(_lib, _SPIN)
_spin.restype = None
_spin.argtypes = [ctypes.c_int64]
_spun = False


def _in_timed_batch() -> bool:
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_name in ("cmd_timed", "_no_grad_call", "timed_batch"):
            return True
        f = f.f_back
    return False


class Model(nn.Module):
    def forward(self, A, B):
        global _spun
        if not _spun and _in_timed_batch():
            _spun = True
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 0.06:
                _spin(200000)
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype)
        _sgemm(101, 111, 111, M, N, K, 1.0, A.data_ptr(), K, B.data_ptr(), N, 0.0, C.data_ptr(), N)
        return C
