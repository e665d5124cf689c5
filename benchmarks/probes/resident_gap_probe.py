"""Probe: what a resident judge spends per job outside its stages (BENCHMARKS.md, "The judge's own threads").

Grades six copies of an honest GELU (tests/corpus/honest/torch_gelu_erf.py, a comment apart so each is its own job)
through `grade_sources` on the CPU, one worker, so one resident judge serves them all; prints, per record, the judge's
wall less the sum of its stages (the collection after each job, the dispatch), their median past the first job, and
the whole wall time.
Usage: python benchmarks/probes/resident_gap_probe.py
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time


def main() -> None:
    sys.path.insert(0, os.getcwd())
    from kb_data.harness.grade import Options
    from kb_data.harness.rewards import grade_sources
    from tests.corpus import CORPUS, SMALL_PROBLEMS

    src = (CORPUS / "honest" / "torch_gelu_erf.py").read_text()
    pairs = [("v3/level1/26_GELU_", f"{src}\n# copy {i}\n") for i in range(6)]
    opt = Options(device="cpu", trials=3, warmup=1, require_custom_kernel=False)
    gaps, t0 = [], time.time()
    for _, rec in grade_sources(pairs, options=opt, problems_root=SMALL_PROBLEMS, workers=1):
        stages = json.loads(rec.harness_seconds)
        inside = sum(v for k, v in stages.items() if k not in ("worker_wall", "build", "build_wait") and "." not in k)
        gaps.append(stages["worker_wall"] - inside)
    print(f"status {rec.status}; outside the stages per job (s): {[round(g, 3) for g in gaps]}; "
          f"median past the first {statistics.median(gaps[1:]):.3f} s; wall {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
