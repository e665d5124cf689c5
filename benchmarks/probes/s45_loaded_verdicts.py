"""Corpus entries graded on the CPU N times each while B busy loops load the host: each grading's status, flags,
speedup and timing bound (claims, floors, floored batches). Session 45: session 44's CI failed three tests while its
host ran the honest GELU 10x slower than usual (6.1 ms a call against 0.66 ms here).

  PYTHONPATH=. python benchmarks/probes/s45_loaded_verdicts.py N BURNERS ENTRY_PATH...
"""
import json
import multiprocessing as mp
import sys
from pathlib import Path

from tests.corpus import SMALL_PROBLEMS, entries
from tests.test_anticheat import _grade


def _burn() -> None:
    while True:
        pass


def main(n: int, burners: int, paths: list[str]) -> None:
    wanted = {Path(p).resolve() for p in paths}
    chosen = [e for e in entries() if e.path.resolve() in wanted]
    load = [mp.Process(target=_burn, daemon=True) for _ in range(burners)]
    [p.start() for p in load]
    try:
        for entry in chosen:
            for i in range(n):
                trials = next((int(o[7:]) for o in entry.options if o.startswith("trials_")), 5)
                rec = _grade(entry, SMALL_PROBLEMS, "cpu", trials)
                d = json.loads(rec.flag_details or "{}")
                b = d.get("timing_bound") or {}
                keys = ("claimed_ms", "typical_claim_ms", "trusted_ms", "trusted_forward_ms", "aside_over_allowed_ms", "batches", "floored",
                        "over_bound")
                print(entry.path.stem, i, rec.status, rec.flags, f"speedup={rec.speedup} sol_ms={rec.sol_ms}",
                      {k: (round(b[k], 4) if isinstance(b.get(k), float) else b.get(k)) for k in keys},
                      f"roofline_ms={d.get('roofline_ms')}", (rec.error or "")[:200], flush=True)
    finally:
        [p.terminate() for p in load]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:])
