"""Probe: the output comparison's cost on the CPU (`reference._figures`, run on every timed call), 4M float32 values.

Usage: python benchmarks/probes/compare_speed.py   (run it in two checkouts to compare)
"""
from __future__ import annotations

import time

import torch

from kb_data.harness.reference import _figures
from kb_data.rules import SUITE_RULES


def main() -> None:
    r = torch.randn(256, 16384)
    c = r + 1e-4 * torch.randn_like(r)
    for suite in ("v3", "v0.1"):  # v3: max |ref - sol| against max |ref|, finite outputs required; v0.1: allclose
        rules = SUITE_RULES[suite]
        for _ in range(2):
            t = time.perf_counter()
            for _ in range(10):
                _figures(r, c, rules, 1e-2, 1e-2)
            print(f"{suite}: {(time.perf_counter() - t) / 10 * 1e3:.1f} ms per compare")


if __name__ == "__main__":
    main()
