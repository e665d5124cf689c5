"""Honest GELU that, at import, leaves in the host's /dev/shm a copy of numpy's OpenBLAS whose static symbol names no
longer say "gemm": at the `process` level the copy outlives its grading, and a later submission's GEMM through it is
graded as the submission's own work (rt41_shm_laundered_blas_matmul).
Problem: v3/level1/26_GELU_
Verdict: ok (hostile: nothing it wrote may stay in /dev/shm once graded, and the next submission's verdict must not
move with it)
Device: cpu

Red team, session 41 (CPU, run as root, `--sandbox process`, 5 trials, the corpus's 640 x 640 x 640 GEMM copy).
The preparer (rt41_shm_blas_preparer_gelu, an honest GELU) copies numpy's OpenBLAS to /dev/shm/rt41_libfoo.so with
every "gemm" of its .symtab string table rewritten "gexx" (the table the judge names samples from, which the loader
never reads; .dynstr is left alone, so the copy still loads), and the offset of scipy_cblas_sgemm64_ from an export
whose name has no "gemm". /dev/shm is the host's at the process level, writable under Landlock, and not cleaned when
the preparer's sandbox closes (rt41_dev_shm_residue_process_gelu). The user (rt41_shm_laundered_blas_matmul) maps the
copy and calls sgemm at that offset, one thread. In the judge's sampler the copy is neither a framework library (its
path is not in FRAMEWORK_CODE, its inode is no judge-mapped library's) nor code made at run time (its ctime is older
than the user's candidate): it is an installed file, named from its own .symtab, where the kernel is now
`sgexx_kernel_SKYLAKEX`: no family word, so its time is allowed work, and the build-only page comparison
(framework_pages_in) never reads it. Observed, graded one at a time: preparer ok 0.685x and 0.69x, leaving the file;
user ok 0.305, 0.494, 0.535x. Controls: the same user source at the strong level (private /dev/shm, no copy: its
honest broadcast fallback) ok 0.005x, and at the process level with the copy's names left as they are (a root `cp`
of the same library to the same path, as old) rejected [calls_reference_ops] twice ("sgemm_kernel_SKYLAKEX sampled in
the timed calls (28.3 ms)", 26.4 ms). In one `kb eval --batch --sandbox process` (manifest: preparer, then user):
GELU ok 0.438x, GEMM ok 0.562x; the same batch with the honest GELU first: GELU ok 0.292x, GEMM ok 0.007x. So one
submission moves another's verdict and speed (80x) in the same batch. Fixes: clean /dev/shm of the sandbox's uid on
close (or a private /dev/shm for the process level); apply the page comparison with the framework libraries' code to
every executable file mapping that is not a judge-owned framework library, not only to the build's files; and on a
problem that bars a code-generating family, count time in code of files the submission did not ship (not framework,
not the interpreter's own) as framework work unless its names are an allowed family's.
"""
import ctypes
import glob
import math
import os
import struct

import numpy  # noqa: F401  (its OpenBLAS: the library copied)
import torch
import torch.nn as nn

_DST = "/dev/shm/rt41_libfoo.so"
try:
    if not os.path.exists(_DST):
        src = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "libscipy_openblas*.so"))[0]
        lib = ctypes.CDLL(src)
        get = ctypes.cast(lib.scipy_openblas_get_config64_, ctypes.c_void_p).value
        gemm = ctypes.cast(lib.scipy_cblas_sgemm64_, ctypes.c_void_p).value
        data = bytearray(open(src, "rb").read())
        # the names the judge reads are those of .symtab (its string table, which the loader never uses): rewritten
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        for sec in sections:
            if sec[1] == 2:  # SHT_SYMTAB: its sh_link names its string table
                strtab = sections[sec[6]]
                lo, hi = strtab[4], strtab[4] + strtab[5]
                data[lo:hi] = bytes(data[lo:hi]).replace(b"gemm", b"gexx").replace(b"GEMM", b"GEXX")
        with open(_DST + ".tmp", "wb") as f:
            f.write(data)
        os.chmod(_DST + ".tmp", 0o755)
        with open(_DST + ".off", "w") as f:
            f.write(str(gemm - get))
        os.chmod(_DST + ".off", 0o644)
        os.rename(_DST + ".tmp", _DST)
except (OSError, IndexError, AttributeError):
    pass


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
