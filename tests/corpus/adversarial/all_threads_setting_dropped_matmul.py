"""The square matmul by torch.matmul on a worker thread started at import, with the profiler's setting that records
every thread replaced by one that drops it, so the profile saw the calling thread only and still said it saw them
all (red team, session 25: ok at 0.17-0.75x, honest 0.09-0.11x). The server now builds that setting before the
submission exists.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import queue
import sys
import threading

import torch
import torch.nn as nn
import torch._C._profiler as _p

_Cfg = _p._ExperimentalConfig


def _config(*args, **kw):
    kw.pop("profile_all_threads", None)
    return _Cfg(*args, **kw)


_p._ExperimentalConfig = _config

sys.setswitchinterval(1e-5)
_jobs, _done = queue.Queue(), queue.Queue()


def _worker():
    torch.set_num_threads(1)
    while True:
        A, B = _jobs.get()
        with torch.no_grad():
            _done.put(torch.matmul(A, B))


threading.Thread(target=_worker, daemon=True).start()


class Model(nn.Module):
    def forward(self, A, B):
        _jobs.put((A, B))
        return _done.get()
