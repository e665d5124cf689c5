"""Session 37 probe: how much a round trip to a process that runs GPU work costs past that work, when the waiting side
sleeps in recv() and when it polls the socket, for GPU work of a few lengths. The harness's timing bound subtracts a
no-work round trip calibrated on short batches from the round trips of the timed loop, which may be much longer: a
sleeper's wake-up that grows with the length of its sleep would show as the call's time.

  python benchmarks/probes/s37_wake_latency.py [ROUND_TRIPS]   (one JSON line per (GPU ms, mode))
"""
import json
import os
import select
import socket
import statistics
import struct
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
LENGTHS_MS = (0.0, 0.5, 2.0, 16.0)


def child(sock: socket.socket) -> None:
    import torch

    torch.cuda.init()
    rate = _cycles_per_ms(torch)
    while True:
        head = sock.recv(8)
        if not head:
            return
        (ms,) = struct.unpack(">d", head)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        if ms > 0:
            torch.cuda._sleep(int(ms * rate))
        b.record()
        torch.cuda.synchronize()
        sock.sendall(struct.pack(">d", a.elapsed_time(b)))


def _cycles_per_ms(torch) -> float:
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1 << 20)
    a.record()
    torch.cuda._sleep(1 << 24)
    b.record()
    torch.cuda.synchronize()
    return (1 << 24) / a.elapsed_time(b)


def round_trip(sock: socket.socket, ms: float, spin: bool) -> tuple[float, float]:
    t0 = time.perf_counter()
    sock.sendall(struct.pack(">d", ms))
    if spin:
        while not select.select([sock], [], [], 0)[0]:
            pass
    (gpu,) = struct.unpack(">d", sock.recv(8))
    return (time.perf_counter() - t0) * 1e3, gpu


def main() -> None:
    parent, kid = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        child(kid)
        os._exit(0)
    kid.close()
    for _ in range(20):
        round_trip(parent, 0.5, False)
    for ms in LENGTHS_MS:
        for spin in (False, True, False, True):
            extra = []
            for _ in range(N):
                wall, gpu = round_trip(parent, ms, spin)
                extra.append(wall - gpu)
            extra.sort()
            print(json.dumps({"gpu_ms": ms, "mode": "poll" if spin else "sleep", "n": N,
                              "extra_ms_p10_p50_p90": [round(extra[int(q * (N - 1))], 4) for q in (0.1, 0.5, 0.9)],
                              "extra_ms_mean": round(statistics.fmean(extra), 4)}), flush=True)
    parent.close()
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
