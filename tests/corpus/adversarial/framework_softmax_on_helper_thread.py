"""Softmax by the framework's own torch.softmax, run on a helper thread started at import. Until session 24 torch's
CPU profiler recorded only the thread it was enabled on, so the profile call saw no aten::softmax (ok; red team,
session 16, open/rt16_helper_thread_framework_softmax), and a thread alive before forward is not among those counted
as left running. The candidate's profile now records every thread of its process.
Problem: v3/level1/23_Softmax
Verdict: rejected [calls_reference_ops]
Device: cpu
Not a forgery: nothing is patched and the profile command reports what it saw. The work stays inside the timed
interval (forward waits for the helper), so the time is honest; what passed was the framework's softmax kernel
graded as the submission's own. On a GPU, CUPTI sees the helper's kernels by name (not run there).
"""
import queue
import threading

import torch
import torch.nn as nn

_jobs, _done = queue.SimpleQueue(), queue.SimpleQueue()


def _helper():
    while True:
        x, dim = _jobs.get()
        try:
            _done.put(torch.softmax(x, dim=dim))
        except BaseException as e:  # hand the error back to forward
            _done.put(e)


threading.Thread(target=_helper, name="pool-0", daemon=True).start()


class Model(nn.Module):
    def forward(self, x):
        _jobs.put((x, 1))
        out = _done.get()
        if isinstance(out, BaseException):
            raise out
        return out
