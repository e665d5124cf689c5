"""Probe: every problem's meta analysis (FLOPs, bytes, where it ran, error) and its wall time, as JSON.

Run it before and after a change to kb_data/meta.py and compare the files: the facts must be identical.
Usage: python benchmarks/probes/meta_all_problems.py OUT.json
"""
from __future__ import annotations

import json
import sys
import time

from kb_data import meta as M
from kb_data.problems import ProblemSet


def main() -> None:
    ps, out, t0 = ProblemSet(), {}, time.time()
    for suite in ("v3", "v0.1"):
        for pid in ps.ids(suite):
            t = time.time()
            m = M.analyze_on_meta(ps.load(pid), with_trace=False)
            out[pid] = [m.flops, m.min_bytes, m.device, (m.error or "")[:100], round(time.time() - t, 2)]
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=0)
    print(f"{len(out)} problems in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
