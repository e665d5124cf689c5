"""Computes GELU on a high-priority private stream that does not wait for the caller's stream, then makes the
caller's stream wait for it, so the output is complete when forward returns. Launched right behind the harness's
L2 flush (framework ops launch in microseconds), the work runs during the flush, before the start event, and its
blocks are dispatched ahead of the flush's: the timed interval holds almost none of it. Caught on the H200
(2026-12-01): the flush ahead of its calls took 82.9 us, ahead of the reference's 68.6 us. On a host too slow to
launch it within the flush (another H200 machine that day), its work falls inside the interval: nothing gained
(0.22 ms against the reference's 0.0125), and then only no_custom_kernel rejects it. Hence "caught": which flag
depends on the host (tests/test_timing.py holds the flush check to the figures above).
Problem: v3/level1/26_GELU_
Verdict: caught
Device: cuda
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x):
        if self.side is None:
            self.side = torch.cuda.Stream(priority=-1)
        with torch.cuda.stream(self.side):  # no wait_stream: free to start before what the caller queued
            y = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        done = torch.cuda.Event()
        done.record(self.side)
        torch.cuda.current_stream().wait_event(done)
        return y
