"""Cost of the trust boundary: the honest corpus graded one by one, wall time per submission and stage, with the
figures the judge's bounds decide on (timing bound, profiled busy time, CPU framework samples).

Run from a checkout's root (any harness version with `grade()`); prints one JSON line per submission and a
summary, and writes them to --out. BENCHMARKS.md ("Trust boundary") compares two versions run this way. On a CPU,
`--small` grades on the test problems as the CPU corpus tests do (5 trials), and `--also` adds entries by name
(adversarial, hostile or open ones) to compare with the honest figures.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from kb_data.harness.grade import Options, grade  # noqa: E402
from kb_data.problems import ProblemSet  # noqa: E402
from tests.corpus import CORPUS, SMALL_PROBLEMS, Entry, entries  # noqa: E402


def _named(stem: str) -> Entry:
    """A corpus entry by file name, the open ones (which the corpus loader skips) included."""
    found = next((e for e in entries() if e.path.stem == stem), None)
    if found is not None:
        return found
    path = CORPUS / "open" / f"{stem}.py"
    doc = path.read_text(encoding="utf-8").split('"""')[1]
    field = lambda name: (re.search(rf"^{name}:\s*(.+)$", doc, re.M) or [None, ""])[1].strip()
    return Entry(path, field("Problem"), "ok", [], field("Device") or None, [])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--tag", default="new")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--shipped-baselines", action="store_true",
                    help="grade against the shipped baseline rows, as `kb eval` does (no baseline measured per grade)")
    ap.add_argument("--small", action="store_true", help="the test problems (tests/corpus/problems), 5 trials")
    ap.add_argument("--also", nargs="*", default=[], help="more corpus entries by file name (open ones too)")
    ap.add_argument("--only-also", action="store_true", help="grade the --also entries alone, not the honest corpus")
    args = ap.parse_args()
    honest = [e for e in entries() if e.honest and e.device in (None, args.device.split(":")[0])
              and "builds" not in e.options and not args.only_also] + [_named(n) for n in args.also]
    ps = ProblemSet(SMALL_PROBLEMS if args.small else None)
    rows = []
    baselines = None
    if args.shipped_baselines:
        from kb_data.harness.baselines import BaselineIndex

        baselines = BaselineIndex.shipped()

    def one(e):
        opt = Options(device=args.device, require_custom_kernel="allow_framework" not in e.options,
                      **({"trials": 5, "warmup": 1} if args.small else {}))
        t0 = time.perf_counter()
        rec, _ = grade(ps.load(e.problem), e.path.read_text(), name=str(e.path), options=opt, baselines=baselines)
        return rec, time.perf_counter() - t0

    one(honest[0])  # the worker server's start, once per process, stays out of the figures
    for r in range(args.repeats):
        for e in honest:
            rec, wall = one(e)
            details = json.loads(rec.flag_details) if rec.flag_details else {}
            row = {"tag": args.tag, "shipped_baselines": args.shipped_baselines, "repeat": r, "entry": e.path.stem, "problem": e.problem, "status": rec.status,
                   "flags": rec.flags, "wall_s": round(wall, 3), "speedup": rec.speedup, "sol_ms": rec.sol_ms,
                   "ref_ms": rec.ref_ms, "stages": json.loads(rec.harness_seconds or "{}"),
                   "timing_bound": details.get("timing_bound"), "flush_ms": details.get("flush_ms"),
                   "n_trials": rec.n_trials, "error": (rec.error or "")[:300] or None,
                   "side_stream_work": details.get("side_stream_work"), "sandbox": getattr(rec, "sandbox", None),
                   "profiled_busy_ms": details.get("profiled_busy_ms"),
                   "framework_samples": details.get("framework_samples"),
                   "framework_functions_ms": details.get("framework_functions_ms")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    walls = [r["wall_s"] for r in rows]
    summary = {"tag": args.tag, "n": len(rows), "median_wall_s": statistics.median(walls), "total_wall_s": sum(walls),
               "ok": sum(r["status"] == "ok" for r in rows)}
    print(json.dumps(summary))
    if args.out:
        args.out.write_text("\n".join(json.dumps(r) for r in rows + [summary]) + "\n")


if __name__ == "__main__":
    main()
