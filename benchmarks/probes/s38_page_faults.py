"""What a CPU grading's 32 MiB tensors cost in page faults (session 38): the test LayerNorm's call, a clone and the
judge's comparison (`reference._figures`) of its output, with glibc's default allocation (a tensor of 32 MiB or more
is mapped afresh and faulted in on every allocation) and with its mmap threshold raised (`mallopt`, freed blocks
reused). One thread, ten calls each, median of three runs:

  python benchmarks/probes/s38_page_faults.py           default
  python benchmarks/probes/s38_page_faults.py reuse     mallopt(M_MMAP_THRESHOLD, 1 GiB), mallopt(M_TRIM_THRESHOLD, 1 GiB)
"""
import ctypes
import statistics
import sys
import time

import torch

from kb_data.harness.reference import _figures

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def ms_per_call(fn, calls: int = 10) -> float:
    fn()
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - t0) * 1e3 / calls)
    return statistics.median(runs)


def main() -> None:
    if sys.argv[1:] == ["reuse"]:
        libc = ctypes.CDLL("libc.so.6")
        assert libc.mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1
    torch.set_num_threads(1)
    x = torch.randn(2, 64, 256, 256)
    y = x + 1e-4 * torch.randn_like(x)
    rules = {"check": "allclose", "require_finite": True}
    for name, fn in (("layer_norm", lambda: torch.nn.functional.layer_norm(x, (64, 256, 256))),
                     ("clone", x.clone), ("randn", lambda: torch.randn(2, 64, 256, 256)),
                     ("compare (_figures)", lambda: _figures(x, y, rules, 1e-3, 1e-3))):
        print(f"{name:20s} {ms_per_call(fn):7.2f} ms")


if __name__ == "__main__":
    main()
