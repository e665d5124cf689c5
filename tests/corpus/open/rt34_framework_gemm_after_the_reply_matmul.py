"""Matmul whose timed calls return the judge's output slot unwritten, at once; a thread of the submission's computes every call's
product with the framework's GEMM (torch.mm, a barred family) straight into the judge's output slots after the batch's
reply, while the judge reads its sampler (add_samples) and before it copies the outputs. The profiled call and every
`forward` command (correctness, float64, weights checks) run an honest broadcast-and-sum GEMM.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [timer_tampered]
Device: cpu
The judge reads the sandbox's clocks (cgroup, forward and aside threads) right after the reply, then stops the sampler
and the flush watch (8-14 ms on this machine), and only then clones the output slots: work done in that window is on no
clock and in no sample. No harness function, clock, hook or mode is touched: the slots are found through the frames.
Closed in session 34 (the outputs are copied before the clocks and the sampler stop): `stale_output`, or, where the
write wins the race with the copy, its work on the clocks (tests/corpus/open/README.md).
"""
import sys
import threading
import time

import torch
import torch.nn as nn

DELAY_S = 0.001  # after the batch's last call: past the judge's clock reads, inside its sampler's stop


def _key(d):
    return (d["name"], d.get("handle") or d.get("id"), d["dtype"], tuple(d["shape"]))


def _honest(A, B):
    rows = [(A[i:i + 32, :, None] * B[None, :, :]).sum(dim=1) for i in range(0, A.shape[0], 32)]
    return torch.cat(rows)


class _Helper:
    def __init__(self):
        self.go = threading.Event()
        self.jobs = []
        self.ready = threading.Event()
        threading.Thread(target=self.loop, daemon=True).start()
        self.ready.wait()

    def loop(self):
        torch.set_num_threads(1)  # this thread's own OpenMP team, and the GEMM's JIT kernels, made before any batch
        for _ in range(3):
            torch.mm(torch.randn(128, 128), torch.randn(128, 128))
        self.ready.set()
        while True:
            self.go.wait()
            self.go.clear()
            jobs, self.jobs = self.jobs, []
            time.sleep(DELAY_S)
            for slots, ka, kb, kout in jobs:
                a, b, out = slots.get(ka), slots.get(kb), slots.get(kout)
                if a is not None and b is not None and out is not None:
                    torch.mm(a, b, out=out)


def _timed_call():
    """(server, message, call index, the server module's globals) when called from the harness's timed batch, else None."""
    f, c = sys._getframe(2), None
    while f is not None:
        name = f.f_code.co_name
        if name == "timed_batch" and "c" in f.f_locals:
            c = f.f_locals["c"]
        elif name == "cmd_timed" and c is not None:
            return f.f_locals.get("self"), f.f_locals.get("msg"), c, f.f_globals
        f = f.f_back
    return None


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.helper = _Helper()

    def forward(self, A, B):
        where = _timed_call()
        if where is None:
            return _honest(A, B)
        server, msg, c, g = where
        call = msg["calls"][c]
        # the output slot itself, opened with the server's own functions (its module's globals): the harness's copy
        # of the output into it is then a copy onto itself, a no-op, and never lands after the helper's write
        out = g["open_slot"](g["SlotDesc"].from_msg(call["outputs"][0]), server.slots, server.received)
        self.helper.jobs.append((server.slots, _key(call["inputs"][0]["slot"]), _key(call["inputs"][1]["slot"]),
                                 _key(call["outputs"][0])))
        if c == len(msg["calls"]) - 1:
            self.helper.go.set()
        return out
