"""Standard matmul: numpy's OpenBLAS sgemm from a copy of its library made in the build stage, with one byte of each of
its code pages changed where no instruction this GEMM runs can see it (alignment padding between functions, a
multi-byte NOP re-encoded with another base register, a byte of a LAPACK routine or of a LAPACK PLT stub never called)
and the .symtab's "gemm"/"gemv" spelt "gexx"/"gexv" (the loader reads .dynsym only). Red team, session 41b (CPU,
strong sandbox). The build-stage copy (adversarial/framework_gemm_blas_copied_in_build_stage) is caught only by
`framework_pages_in`, which compares whole pages' digests with the framework libraries' code: here no page matches
(0 of 4929), the copy is older than the candidate and root's (not made at run time), it lies in the submission's
build folder, so its samples are named by its own (renamed) symbol table -- `sgexx_kernel_HASWELL`, no family word --
and count as the submission's own compiled code. OPENBLAS_CORETYPE=Haswell picks the kernel whose pages the
laundering re-encodes (SkylakeX's AVX-512 kernel has 9 pages with no NOP to re-encode).
Graded (2026-12-06, CPU, strong sandbox, benchmarks/probes/s34_verdicts.py, load average 4.6-4.9): TODAY it is
rejected [calls_reference_ops] 3 of 3 at 5 trials ("5.9-6.3 ms of CPU a call in the framework's code that is unnamed
(generated at run time)"), but only because every seeded build is now taken for run-time code (the build's copy in the
work dir is chowned to the sandbox uid, and `_made_at_run_time` counts any sandbox-uid file as made at run time since
86762d0): the honest control honest/cpp_extension_gemm is rejected the same way 3 of 3 (22.8-23.1 ms a call), see
open/rt41b_seeded_build_taken_for_run_time_code_matmul. With that false positive fixed the obvious way (a file under
the submission's work dir whose ctime is before the candidate started is the seeded build, exempt from the uid rule;
a 3-line patch, reverted after): this hack ok [] 0.823x, 0.458x, 0.442x at 5 trials and 0.458x, 0.558x, 0.546x at 30
trials; the honest C++ blocked GEMM ok [] 0.087x, 0.199x, 0.164x (5) and 0.129x, 0.127x, 0.163x (30): ~3.5x the honest
kernel's speed from the framework's BLAS, and no page of the copy matches (framework_pages_in: {} where the plain copy
gives 4929 pages). Gap: harness/profiled.py (`framework_pages_in` over whole-page digests, COPIED_PAGES_MIN) and
harness/sampler.py `_executable_regions`/`functions_at` (a build's function is named by the build's own .symtab, which
the submission wrote). Fix: match a build's code against the framework's at any offset and with a few bytes changed
(digests of short windows, e.g. every 64-byte window at 16-byte steps of the framework's functions, looked up for every
window of the build's executable sections), and name a build's samples from its .dynsym/.symtab only where the name is
defined in the submission's source AND its bytes are not the framework's; or refuse a build whose file is an ELF the
submission did not produce with the compiler run by the build stage (compare the built .so with the compiler's output).
Caught since (session 41, copies.copied_from_framework): the code at the build file's most sampled places is
found in a framework library at one shift, so its samples are that library's (rejected [calls_reference_ops] 2 of 2,
8.2 and 5.7 ms of CPU a call; honest/cpp_extension_gemm ok 0.147x and 0.133x beside it).
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
_lib = ctypes.CDLL(_dst)
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
