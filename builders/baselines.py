"""Baseline rows -> the `kernelbench-v3-baselines` dataset folder (one split per GPU).

    rows = shipped_baselines()                 # measured JSONL rows + rows derived from the sweep
    build_baselines(rows, "out/kernelbench-v3-baselines")
    load_dataset("out/kernelbench-v3-baselines", split="H100")

One row is one (problem, GPU, software stack) timing of a reference: `source="measured"` rows come
from this harness (`kb_data/data/baselines_*.jsonl`, one JSON object per line), `source="derived"`
rows are medians of the `ref_ms` of the published sweep's correct run records.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from kb_data.paths import DATA_DIR
from kb_data.harness.baselines import row_timing_method
from kb_data.io import JsonlError, read_jsonl
from kb_data.schema import SCHEMA_VERSION, Baseline, SchemaError, schema_markdown

from .common import (
    BASELINES, UPSTREAM_CITATIONS, BuildResult, Staging, crosstab, gpu_key, md_code, md_table, natural_key, records_table,
    render_card, split_file, validate_records, write_bytes_atomic, write_parquet, yaml_block,
)

CONFIG = "default"
EMPTY_SPLIT = "train"  # the one split of a build without rows


def read_baseline_jsonl(path: str | Path) -> list[Baseline]:
    """Baseline rows of one JSONL file; a bad line is refused naming file:line and the field."""
    try:
        pairs = read_jsonl(path)
    except JsonlError as e:
        raise SchemaError(str(e)) from e
    return validate_records(pairs, Baseline)


def measured_baseline_rows(data_dir: str | Path | None = None) -> list[Baseline]:
    """The measured rows shipped as `baselines_*.jsonl` in kb_data/data (none is fine)."""
    data_dir = Path(data_dir) if data_dir is not None else DATA_DIR
    out: list[Baseline] = []
    for path in sorted(data_dir.glob("baselines_*.jsonl")):
        out += read_baseline_jsonl(path)
    return out


def shipped_baselines(records: list | None = None, data_dir: str | Path | None = None) -> list[Baseline]:
    """Measured rows plus `kb_data.importer.derived_baselines(records)` (the shipped sweep by default)."""
    from kb_data import importer

    if records is None:
        from .runs import shipped_runs

        records = shipped_runs()
    return measured_baseline_rows(data_dir) + list(importer.derived_baselines(records))


def _sort_key(b: Baseline) -> tuple:
    return (gpu_key(b.gpu), b.suite, natural_key(b.problem_id), b.baseline_type or "", b.source or "",
            b.measured_at or "", json.dumps(b.to_row(), sort_keys=True, default=str))


def build_baselines(rows: list, out: str | Path) -> BuildResult:
    records = sorted(validate_records(rows, Baseline), key=_sort_key)
    by_gpu: dict[str, list[Baseline]] = {}
    for b in records:
        by_gpu.setdefault(b.gpu, []).append(b)
    splits = {gpu: by_gpu[gpu] for gpu in sorted(by_gpu, key=gpu_key)} or {EMPTY_SPLIT: []}
    bad = [g for g in splits if not g.replace("_", "a").isalnum()]
    if bad:
        raise SchemaError(f"Baseline.gpu {bad[0]!r} cannot name a split (letters, digits and _ only)")
    with Staging(out) as tmp:
        for gpu, recs in splits.items():
            write_parquet(records_table(recs, Baseline), tmp / split_file(CONFIG, gpu))
        write_bytes_atomic(tmp / "README.md", baselines_card(records, splits).encode("utf-8"))
    return BuildResult(BASELINES, Path(out), len(records), {CONFIG: {g: len(r) for g, r in splits.items()}})


def baselines_card(records: list[Baseline], splits: dict[str, list]) -> str:
    configs = [{"config_name": CONFIG, "default": True,
                "data_files": [{"split": g, "path": split_file(CONFIG, g)} for g in splits]}]
    sources = Counter(b.source for b in records)
    derived = [b for b in records if b.source == "derived"]
    gpus = [g for g in splits if g != EMPTY_SPLIT or records]
    problems_per_gpu = md_table(
        ["GPU", "rows", "problems", "measured", "derived"],
        [[md_code(g), len(splits[g]), len({b.problem_id for b in splits[g]}),
          sum(b.source == "measured" for b in splits[g]), sum(b.source == "derived" for b in splits[g])] for g in gpus])
    stacks = Counter((b.gpu, b.torch_version or "-", b.cuda_version or "-") for b in records if b.source == "measured")
    values = {
        "configs_yaml": yaml_block(configs),
        "size_category": "n<1K" if len(records) < 1000 else "1K<n<10K" if len(records) < 10000 else "10K<n<100K",
        "n_rows": len(records),
        "n_problems": len({b.problem_id for b in records}),
        "n_gpus": len(gpus),
        "n_measured": sources.get("measured", 0),
        "n_derived": sources.get("derived", 0),
        "first_split": gpus[0] if gpus else EMPTY_SPLIT,
        "split_list": ", ".join(md_code(g) for g in splits),
        "counts_by_gpu": problems_per_gpu if gpus else "No rows in this build.",
        "counts_by_suite": crosstab(((b.gpu, b.suite) for b in records), row_key=gpu_key, row_title="GPU")
        if records else "No rows in this build.",
        "counts_by_method": crosstab(((b.gpu, row_timing_method(b.to_row()) if b.source == "measured" else "(derived)")
                                      for b in records), row_key=gpu_key, row_title="GPU")
        if records else "No rows in this build.",
        "counts_by_type": crosstab(((b.gpu, b.baseline_type or "(none)") for b in records), row_key=gpu_key,
                                   row_title="GPU") if records else "No rows in this build.",
        "stacks": md_table(["GPU", "torch", "CUDA", "rows"], [[md_code(g), t, c, n] for (g, t, c), n in
                                                            sorted(stacks.items(), key=lambda kv: (gpu_key(kv[0][0]), kv[0][1:]))])
        if stacks else "No measured rows in this build.",
        "n_derived_records": sum(b.n_records or 0 for b in derived),
        "schema_table": schema_markdown(Baseline),
        "schema_version": SCHEMA_VERSION,
        "citation": UPSTREAM_CITATIONS["kernelbench-v3"] + "\n\n" + UPSTREAM_CITATIONS["kernelbench"],
    }
    return render_card("baselines", values)
