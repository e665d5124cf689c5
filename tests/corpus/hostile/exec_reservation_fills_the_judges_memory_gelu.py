"""An honest GELU (the erf formula) plus one line at import: a 2 TiB anonymous PROT_EXEC reservation (MAP_NORESERVE,
never touched: no page, no RSS, no memory-cgroup charge). Red team, session 42b (CPU, strong sandbox).
harness/sampler.py `_privately_written` reads the page map of every executable mapping of every sandbox process,
after every sampled batch, in ONE os.pread of (hi - lo) / 4096 * 8 bytes: 4 GiB here, of which the kernel fills
~2 GiB (a read is cut at MAX_RW_COUNT) in the judge's own memory, as root, outside the sandbox's cap, and takes
seconds of the judge's time per batch. Measured (probe in-process, 5 trials): the judge's peak RSS 2.88 GiB against
0.51 GiB for the honest file alone, the grading's wall time 16.6 s against 3.0 s; the record stays `ok`. Each
process of the sandbox (fork copies the reservation) is read in turn, each batch again. At 64 TiB the buffer cannot
be allocated and the judge raises instead (adversarial/exec_reservation_raises_the_judge_gelu).
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
Options: needs_sampler
"""
import ctypes
import mmap

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                            ctypes.c_int, ctypes.c_int, ctypes.c_long]
_RESERVED = _libc.mmap(None, 2 << 40, mmap.PROT_READ | mmap.PROT_EXEC,
                       mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000, -1, 0)  # MAP_NORESERVE


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
