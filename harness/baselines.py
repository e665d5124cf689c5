"""Baseline lookup: the reference's timing for a (problem, GPU, software stack)."""
from __future__ import annotations

import json

from kb_data.paths import DATA_DIR


def _minor(version: str | None) -> str | None:
    return ".".join(version.split("+")[0].split(".")[:2]) if version else None


class BaselineIndex:
    """Measured baselines by (problem_id, gpu); a row only matches the same torch major.minor,
    since a different stack gives another reference time."""

    def __init__(self, rows: list[dict]):
        self.rows: dict[tuple[str, str], list[dict]] = {}
        for r in rows:
            if r.get("status", "ok") == "ok" and r.get("baseline_ms") is not None and r.get("source", "measured") == "measured":
                self.rows.setdefault((r["problem_id"], r["gpu"]), []).append(r)

    def lookup(self, problem_id: str, gpu: str, torch_version: str | None = None) -> dict | None:
        cands = self.rows.get((problem_id, gpu), [])
        if torch_version:
            cands = [r for r in cands if _minor(r.get("torch_version")) == _minor(torch_version)]
        return max(cands, key=lambda r: r.get("measured_at") or "") if cands else None

    def __len__(self) -> int:
        return sum(len(v) for v in self.rows.values())

    @classmethod
    def from_files(cls, paths) -> "BaselineIndex":
        rows = []
        for p in paths:
            with open(p, encoding="utf-8") as f:
                rows += [json.loads(line) for line in f if line.strip()]
        return cls(rows)

    @classmethod
    def shipped(cls) -> "BaselineIndex":
        """The measured baselines that ship with the package (kb_data/data/baselines_*.jsonl)."""
        return cls.from_files(sorted(DATA_DIR.glob("baselines_*.jsonl")))
