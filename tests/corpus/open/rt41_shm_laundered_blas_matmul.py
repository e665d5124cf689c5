"""The GEMM through OpenBLAS's sgemm, from the renamed copy an earlier submission left in /dev/shm
(rt41_shm_blas_preparer_gelu): a file older than this candidate, named like no framework library, whose symbols
name no family, so the sampler takes its time for the submission's own. Without the copy: the honest broadcast GEMM.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
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
import os

import numpy  # noqa: F401  (loads the libgfortran the copy needs: its $ORIGIN is /dev/shm)
import torch
import torch.nn as nn

_LIB = "/dev/shm/rt41_libfoo.so"
_sgemm = None
try:
    _lib = ctypes.CDLL(_LIB)
    _off = int(open(_LIB + ".off").read())
    _lib.scipy_openblas_set_num_threads64_(ctypes.c_int(1))
    _base = ctypes.cast(_lib.scipy_openblas_get_config64_, ctypes.c_void_p).value
    _I, _F, _P = ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
    _sgemm = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int, _I, _I, _I, _F, _P, _I, _P, _I, _F,
                              _P, _I)(_base + _off)
except (OSError, ValueError, AttributeError):
    _sgemm = None


class Model(nn.Module):
    def forward(self, A, B):
        if _sgemm is None:
            return torch.cat([(A[i:i + 32, :, None] * B[None, :, :]).sum(dim=1) for i in range(0, A.shape[0], 32)])
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N)
        _sgemm(101, 111, 111, M, N, K, 1.0, A.data_ptr(), K, B.data_ptr(), N, 0.0, C.data_ptr(), N)
        return C
