"""Probe: what a sandbox's close costs after its process initialised CUDA (the judge's `sandbox_close` stage).

Arms, each timed from the close to the tree being reaped: a plain forked child with a CUDA context; a sandbox at
`none` and `strong` running the real candidate server after its `calibrate` command (a CUDA context, the timer's
flush buffer and one output slot opened by CUDA IPC); the same after a clean `exit`. One JSON line per arm.
Usage (GPU machine): python benchmarks/probes/close_probe.py
"""
from __future__ import annotations

import json
import os
import signal
import time


def _plain_cuda(sock):
    import torch

    torch.zeros(1, device="cuda:0")
    torch.cuda.synchronize()
    sock.sendall(b"x")
    time.sleep(600)


def arm(level: str | None, clean_exit: bool) -> dict:
    import torch

    from kb_data.harness import channel, candidate
    from kb_data.harness.sandbox import Limits, Sandbox
    from kb_data.io import lock_dir

    out = {"level": level, "clean_exit": clean_exit}
    sb = Sandbox(level or "none", Limits(memory_bytes=16 << 30), "cuda:0", lock_dir())
    sb.start(_plain_cuda if level is None else candidate.serve)
    torch.zeros(1, device="cuda:0")  # the judge's own context (after the fork), which the slots need
    arena = channel.SlotArena("cuda:0")
    try:
        if level is None:
            sb.sock.recv(1)
        else:
            desc, _ = arena.tensor("out0", torch.float32, [256, 16384])
            torch.cuda.synchronize()
            ids, fds = arena.take_unsent()
            channel.send(sb.sock, {"cmd": "calibrate", "device": "cuda:0", "l2_flush": True, "threads": 4,
                                   "outputs": [desc.to_msg()]}, fds)
            out["calibrate"] = channel.recv(sb.sock, timeout_s=120).get("ok")
        t0 = time.perf_counter()
        if clean_exit:
            channel.send(sb.sock, {"cmd": "exit"})
            sb.wait(30)
            out["exit_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        sb.kill()
        out["kill_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        sb.close()
        out["close_rest_s"] = time.perf_counter() - t2
        out["total_s"] = time.perf_counter() - t0
    finally:
        sb.close()
        arena.close()
    return out


def main() -> None:
    import multiprocessing as mp

    for level, clean in ((None, False), ("none", False), ("none", True), ("strong", False), ("strong", True)):
        with mp.get_context("spawn").Pool(1) as pool:  # the parent must not hold CUDA when it forks the sandbox
            res = pool.apply(arm, (level, clean))
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
