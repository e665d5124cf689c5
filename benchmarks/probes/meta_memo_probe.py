"""Probe: the meta analysis of every shipped problem with and without kb_data.meta.MetaKernelMemo (BENCHMARKS.md, "The
meta analysis replays repeated ops"). Prints each problem whose facts differ (there should be none), the problems
that took over 2 s without the memo, and the total time of each.
Usage: python benchmarks/probes/meta_memo_probe.py [PROBLEMS_ROOT]
"""
from __future__ import annotations

import contextlib
import sys
import time
import warnings
from pathlib import Path

from kb_data import meta
from kb_data.problems import load_problem


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "problems")
    warnings.simplefilter("ignore")
    memo_cls, totals, differ = meta.MetaKernelMemo, {"memo": 0.0, "plain": 0.0}, 0
    files = sorted(p for p in root.rglob("*.py") if p.name != "__init__.py")
    for path in files:
        lp = load_problem(path, root)
        took, facts = {}, {}
        for arm, mode in (("memo", memo_cls), ("plain", contextlib.nullcontext)):
            meta.MetaKernelMemo = mode
            start = time.perf_counter()
            facts[arm] = meta.analyze_on(lp, "meta", with_trace=True)
            took[arm] = time.perf_counter() - start
            totals[arm] += took[arm]
        meta.MetaKernelMemo = memo_cls
        if facts["memo"] != facts["plain"]:
            differ += 1
            print(f"DIFFERS {path}: {[k for k in vars(facts['memo']) if getattr(facts['memo'], k) != getattr(facts['plain'], k)]}")
        if took["plain"] > 2:
            print(f"{path.relative_to(root)}: memo {took['memo']:.1f} s, plain {took['plain']:.1f} s")
    print(f"{len(files)} problems, {differ} differ; memo {totals['memo']:.0f} s, plain {totals['plain']:.0f} s "
          f"({totals['plain'] / totals['memo']:.1f}x)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
