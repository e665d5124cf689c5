"""Baseline lookup: the reference's timing for a (problem, GPU, software stack, timing method)."""
from __future__ import annotations

import statistics

from kb_data.io import read_jsonl_rows
from kb_data.paths import DATA_DIR


def row_timing_method(row: dict) -> str:
    """A row's timing method; rows from before the field existed (2026-12-01) were timed with the device
    synchronized around each call on a GPU, by the wall clock on the CPU."""
    return row.get("timing_method") or ("perf_counter" if row.get("gpu") == "CPU" else "device_synced")


MEASURED_FIELDS = ("eager_ms", "eager_p10_ms", "eager_p90_ms", "compile_ms", "compile_p10_ms", "compile_p90_ms",
                   "compile_error", "eager_gpu_ms", "compile_gpu_ms", "gpu_alone_error", "baseline_ms", "baseline_type",
                   "p10_ms", "p90_ms", "n_trials", "error")


def measured_fields(measured: dict, **override) -> dict:
    """A Baseline's fields from what reference.measure_baseline returned (status: error when the reference failed)."""
    out = {k: measured.get(k) for k in MEASURED_FIELDS}
    out["status"] = "ok" if measured.get("eager_ms") is not None else "error"
    return {**out, **override}


def _minor(version: str | None) -> str | None:
    return ".".join(version.split("+")[0].split(".")[:2]) if version else None


class BaselineIndex:
    """Measured baselines by (problem_id, gpu); a row only matches the same torch major.minor,
    since a different stack gives another reference time."""

    def __init__(self, rows: list[dict]):
        self.rows: dict[tuple[str, str], list[dict]] = {}
        for r in rows:
            self.add(r)

    def add(self, r: dict) -> None:
        """Index a row (one measured in this batch, say); rows that failed or were not measured are left out."""
        if r.get("status", "ok") == "ok" and r.get("baseline_ms") is not None and r.get("source", "measured") == "measured":
            self.rows.setdefault((r["problem_id"], r["gpu"]), []).append(r)

    def lookup(self, problem_id: str, gpu: str, torch_version: str | None = None,
               timing_method: str | None = None) -> dict | None:
        """The newest matching row; with `timing_method`, only a row timed the same way."""
        cands = self.rows.get((problem_id, gpu), [])
        if torch_version:
            cands = [r for r in cands if _minor(r.get("torch_version")) == _minor(torch_version)]
        if timing_method:
            cands = [r for r in cands if row_timing_method(r) == timing_method]
        return max(cands, key=lambda r: r.get("measured_at") or "") if cands else None

    def __len__(self) -> int:
        return sum(len(v) for v in self.rows.values())

    @classmethod
    def from_files(cls, paths) -> "BaselineIndex":
        return cls([row for p in paths for row in read_jsonl_rows(p)])

    @classmethod
    def shipped(cls) -> "BaselineIndex":
        """The measured baselines that ship with the package (kb_data/data/baselines_*.jsonl)."""
        return cls.from_files(sorted(DATA_DIR.glob("baselines_*.jsonl")))


# the medians compared: as graded, and the GPU's work alone (schema 1.3; absent from older rows)
SPREAD_KINDS = ("eager", "compile", "eager_gpu", "compile_gpu")


def run_to_run_spread(first: list[dict], second: list[dict], min_ms: float = 0.1) -> dict:
    """How far a second measurement of the same baselines moved: per problem measured `ok` in both (same GPU
    key and timing method), the relative change of the eager and torch.compile medians, as graded and of the GPU's
    work alone (SPREAD_KINDS), and whether the chosen baseline flipped; the summary counts problems whose first median is over `min_ms` (the issue's bar for the 3% target), and
    compares the two measurements' calibrations, where the rows have them."""
    slot = lambda r: (r["problem_id"], r["gpu"], row_timing_method(r))
    a = {slot(r): r for r in first if r.get("status") == "ok"}
    rows, pairs = [], []
    for r in second:
        key = slot(r)
        if r.get("status") != "ok" or key not in a:
            continue
        pairs.append((a[key], r))
        row = {"problem_id": key[0], "gpu": key[1], "choice": (a[key]["baseline_type"], r["baseline_type"])}
        for kind in SPREAD_KINDS:
            x, y = a[key].get(f"{kind}_ms"), r.get(f"{kind}_ms")
            row[kind] = (x, y, y / x - 1 if x and y else None)
        rows.append(row)
    summary = {"problems": len(rows), "flipped": sum(r["choice"][0] != r["choice"][1] for r in rows),
               "calibration": _calibration_ratios(pairs)}
    for kind in SPREAD_KINDS:
        diffs = [abs(r[kind][2]) for r in rows if r[kind][2] is not None and r[kind][0] > min_ms]
        summary[kind] = {"n": len(diffs), "median_abs": statistics.median(diffs) if diffs else None,
                         "max_abs": max(diffs, default=None), "under_3pct": sum(d < 0.03 for d in diffs)}
    return {"rows": sorted(rows, key=lambda r: r["problem_id"]), "summary": summary}


def _calibration_ratios(pairs: list[tuple[dict, dict]]) -> dict:
    """Per calibration figure, the median over row pairs that both carry one of second / first: how much slower
    the second machine (or moment) was on the same fixed work. Empty when no pair has calibrations."""
    ratios: dict[str, list[float]] = {}
    for x, y in pairs:
        cx, cy = x.get("calibration") or {}, y.get("calibration") or {}
        for k in cx:
            if cx.get(k) and cy.get(k):
                ratios.setdefault(k, []).append(cy[k] / cx[k])
    return {k: statistics.median(v) for k, v in ratios.items()}
