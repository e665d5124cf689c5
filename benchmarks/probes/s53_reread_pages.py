"""Corpus-style entries (open/'s too) graded on the CPU N times each while B busy loops load the host: each
grading's status, flags, speedup and the record's framework-sample figures (session 53: a flood of sampled pages of
made code against the drains' re-reads, and the red team's sample dodging).

  PYTHONPATH=. python benchmarks/probes/s53_reread_pages.py N BURNERS ENTRY_PATH...
"""
import json
import multiprocessing as mp
import sys
from pathlib import Path

from tests.corpus import SMALL_PROBLEMS, entry
from tests.test_anticheat import _grade


def _burn() -> None:
    while True:
        pass


def main(n: int, burners: int, paths: list[str]) -> None:
    chosen = [entry(Path(p).resolve()) for p in paths]
    load = [mp.Process(target=_burn, daemon=True) for _ in range(burners)]
    [p.start() for p in load]
    try:
        for e in chosen:
            for i in range(n):
                trials = next((int(o[7:]) for o in e.options if o.startswith("trials_")), 5)
                rec = _grade(e, SMALL_PROBLEMS, "cpu", trials)
                d = json.loads(rec.flag_details or "{}")
                print(e.path.stem, i, rec.status, rec.flags, f"speedup={rec.speedup}", d.get("framework_samples"),
                      {k: str(d.get(k))[:300] for k in rec.flags}, flush=True)
    finally:
        [p.terminate() for p in load]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
