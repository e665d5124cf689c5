"""The figures BENCHMARKS.md gives for a baseline sweep, from its raw rows (no GPU needed).

    python benchmarks/baseline_figures.py calibration FILE [FILE ...]
        each calibration figure over the distinct chunks of the files (a chunk's rows share one calibration):
        min, median, max and max/min
    python benchmarks/baseline_figures.py methods NEW OLD [--suite v0.1]
        NEW / OLD eager median per problem (e.g. the same problems timed flush_queued and device_synced), by the
        size of the OLD median, with the extremes
    python benchmarks/baseline_figures.py degenerate FILE [--suite v0.1]
        how many `ok` rows of a raw sweep file the sweep judged degenerate, and why
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb_data.io import read_jsonl_rows  # noqa: E402

SIZE_BINS = ((0.0, 0.1), (0.1, 1.0), (1.0, 10.0), (10.0, float("inf")))


def calibration(files: list[Path]) -> None:
    chunks = {tuple(sorted(r["calibration"].items())) for f in files for r in read_jsonl_rows(f) if r.get("calibration")}
    print(f"{len(chunks)} chunks with a calibration in {len(files)} file(s)")
    for name in sorted({k for c in chunks for k, _ in c}):
        xs = [v for c in chunks for k, v in c if k == name and v]
        print(f"{name:10s} min {min(xs):.4f}  median {statistics.median(xs):.4f}  max {max(xs):.4f}  "
              f"max/min {max(xs) / min(xs):.3f}")


def methods(new: Path, old: Path, suite: str | None) -> None:
    before = {r["problem_id"]: r for r in read_jsonl_rows(old) if r.get("eager_ms") and (not suite or r["suite"] == suite)}
    pairs = sorted((r["eager_ms"] / before[r["problem_id"]]["eager_ms"], before[r["problem_id"]]["eager_ms"], r["problem_id"])
                   for r in read_jsonl_rows(new) if r.get("eager_ms") and r["problem_id"] in before)
    print(f"{len(pairs)} problems in both; new / old eager median:")
    for lo, hi in SIZE_BINS:
        xs = [x for x, ms, _ in pairs if lo <= ms < hi]
        if xs:
            print(f"  old median in [{lo}, {hi}) ms: n={len(xs)}  median {statistics.median(xs):.3f}  "
                  f"p10 {xs[len(xs) // 10]:.3f}  p90 {xs[9 * len(xs) // 10]:.3f}")
    for x, ms, pid in pairs[:3] + pairs[-3:]:
        print(f"  {pid:60s} {ms:9.4f} ms -> {x:.3f}")


def degenerate(path: Path, suite: str | None) -> None:
    rows = [r for r in read_jsonl_rows(path) if r.get("status") == "ok" and (not suite or r["suite"] == suite)]
    why = Counter(r["degenerate_reason"] for r in rows if r.get("degenerate_reason"))
    print(f"{sum(why.values())} of {len(rows)} degenerate")
    for reason, n in why.most_common():
        print(f"  {n:4d}  {reason}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("calibration")
    p.add_argument("files", nargs="+", type=Path)
    p = sub.add_parser("methods")
    p.add_argument("new", type=Path)
    p.add_argument("old", type=Path)
    p.add_argument("--suite")
    p = sub.add_parser("degenerate")
    p.add_argument("file", type=Path)
    p.add_argument("--suite")
    args = ap.parse_args()
    if args.what == "calibration":
        calibration(args.files)
    elif args.what == "methods":
        methods(args.new, args.old, args.suite)
    else:
        degenerate(args.file, args.suite)


if __name__ == "__main__":
    main()
