"""Run records -> the `kernelbench-v3-runs` dataset folder (default config, one split `train`).

    build_runs(records, "out/kernelbench-v3-runs")          # a fresh folder
    append_runs(store, "kernelbench-v3-runs", records)       # publish: plan the append, the store commits it

Records are append-only: a batch becomes a shard `data/train-<hash>.parquet` whose name is a
content hash of its record ids, so the same batch always has the same name, and publishing
records whose ids are already in the dataset adds nothing. The card is re-rendered from all rows
(old + new) on every append.
"""
from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kb_data.schema import SCHEMA_VERSION, RunRecord, SchemaError, schema_markdown
from kb_data.store import CommitPlan, PublishError, PublishResult, Store

from .common import (
    RUNS, UPSTREAM_CITATIONS, BuildResult, Staging, crosstab, folder_files, gpu_key, md_code, md_table, md_text,
    records_table, render_card, schema_diff, validate_records, write_bytes_atomic, write_parquet, yaml_block,
)

CONFIG = "default"
SPLIT = "train"
SHARD_GLOB = f"data/{SPLIT}-*.parquet"
SHARD_ROWS = 100_000


def shard_path(record_ids) -> str:
    digest = hashlib.sha256("\n".join(sorted(record_ids)).encode("utf-8")).hexdigest()
    return f"data/{SPLIT}-{digest[:16]}.parquet"


def shipped_runs(problems_root: str | Path | None = None) -> list[RunRecord]:
    """The imported upstream sweep (`kb_data.importer`, imported lazily: it is optional here)."""
    from kb_data import importer

    fn = getattr(importer, "import_upstream", None) or getattr(importer, "import_upstream_csv")
    return list(fn(problems=problems_root) if problems_root is not None else fn())


def prepare_records(records, where: str = "") -> list[RunRecord]:
    """Validate, drop exact duplicates, refuse two different records with one id; sorted by record_id."""
    by_id: dict[str, RunRecord] = {}
    for rec in validate_records(records, RunRecord, where):
        old = by_id.get(rec.record_id)
        if old is not None and old != rec:
            diff = next(f for f, v in rec.to_row().items() if old.to_row()[f] != v)
            raise SchemaError(f"{where}RunRecord.record_id {rec.record_id!r}: two different records share it "
                              f"(first difference: {diff!r})")
        by_id[rec.record_id] = rec
    return [by_id[k] for k in sorted(by_id)]


def _shards(records: list[RunRecord]) -> list[tuple[str, list[RunRecord]]]:
    chunks = [records[i:i + SHARD_ROWS] for i in range(0, len(records), SHARD_ROWS)] or [[]]
    return [(shard_path(r.record_id for r in chunk), chunk) for chunk in chunks]


def build_runs(records, out: str | Path) -> BuildResult:
    """A fresh folder holding every record (an empty build holds one empty shard)."""
    recs = prepare_records(records)
    with Staging(out) as tmp:
        for rel, chunk in _shards(recs):
            write_parquet(records_table(chunk, RunRecord), tmp / rel)
        write_bytes_atomic(tmp / "README.md", runs_card(recs).encode("utf-8"))
    return BuildResult(RUNS, Path(out), len(recs), {CONFIG: {SPLIT: len(recs)}})


@dataclass
class AppendPlan:
    """What publishing `records` onto a dataset that already holds `existing` rows adds."""

    new: list[RunRecord]
    already_present: int
    conflicts: list[str] = field(default_factory=list)  # ids present with other content (kept as published)
    files: dict[str, Path] = field(default_factory=dict)  # repo path -> staged file (new shards + README.md)
    total: int = 0

    @property
    def empty(self) -> bool:
        return not self.new


def plan_append(existing_rows: list[dict], records, staging: str | Path) -> AppendPlan:
    """Stage the shard(s) of the records not yet in the dataset and the re-rendered card."""
    recs = prepare_records(records)
    existing = {r["record_id"]: r for r in existing_rows}
    new = [r for r in recs if r.record_id not in existing]
    present = [r for r in recs if r.record_id in existing]
    conflicts = [r.record_id for r in present if _comparable(r.to_row()) != _comparable(existing[r.record_id])]
    plan = AppendPlan(new, len(present), conflicts, total=len(existing) + len(new))
    if not new:
        return plan
    old = validate_records(((f"published record_id {rid}", row) for rid, row in sorted(existing.items())), RunRecord)
    staging = Path(staging)
    for rel, chunk in _shards(new):
        write_parquet(records_table(chunk, RunRecord), staging / rel)
        plan.files[rel] = staging / rel
    everything = sorted(old + new, key=lambda r: r.record_id)
    write_bytes_atomic(staging / "README.md", runs_card(everything).encode("utf-8"))
    plan.files["README.md"] = staging / "README.md"
    return plan


def append_runs(store: Store, name: str, records, message: str | None = None, tag: str | None = None) -> PublishResult:
    """Publish the records whose `record_id` is not yet in the dataset, as one new shard (+ the card).

    Nothing is rewritten: existing shards stay as they are; publishing the same records again makes no commit.
    Records that fail the schema are refused (row and field named) before anything is written. With `tag`, the
    resulting head is tagged (the store never moves a tag).
    """
    records = prepare_records(records)  # validate first: nothing is written for a bad batch
    head = store.resolve(name) if store.exists(name) else None
    files = store.list_files(name, head) if head is not None else []
    existing = read_published(store, name, head) if any(p.startswith("data/") and p.endswith(".parquet")
                                                         for p in files) else []
    with tempfile.TemporaryDirectory(prefix="kb-append-") as tmp:
        plan = plan_append(existing, records, tmp)
        if plan.empty:
            result = PublishResult(name, head or "", False, tag=tag, store=store.kind)
            if tag is not None and head is not None:
                result = store.commit(name, CommitPlan({}, "tag", head, replace=False, tag=tag))
        else:
            clash = [p for p in plan.files if p != "README.md" and p in set(files)]
            if clash:
                raise PublishError(f"{store.describe(name)}: shard {clash[0]} exists already")
            result = store.commit(name, CommitPlan(dict(plan.files), message or f"Append {len(plan.new)} run record(s)",
                                                   head, replace=False, tag=tag))
    result.rows_added, result.rows_present, result.conflicts = len(plan.new), plan.already_present, plan.conflicts
    return result


def read_published(store: Store, name: str, head: str) -> list[dict]:
    """Every published record, after checking each shard has the current RunRecord schema.

    A shard written under another schema version cannot be appended to: `datasets` could not
    load old and new shards together. That needs an explicit migration, not a silent append.
    """
    import pyarrow.dataset as pds

    src = store.parquet_source(name, head)
    ds = pds.dataset(src.paths, format="parquet", filesystem=src.filesystem)
    want = RunRecord.arrow_schema()
    for frag in ds.get_fragments():
        got = frag.physical_schema
        if not got.remove_metadata().equals(want.remove_metadata()):
            raise PublishError(f"{store.describe(name)}@{head[:12]}: shard {frag.path.rsplit('/', 1)[-1]} has another "
                               f"schema than RunRecord {SCHEMA_VERSION} ({schema_diff(got, want)}); appending would "
                               "make the dataset unloadable, so the records were not published (migrate it first: "
                               "kb migrate runs)")
    return ds.to_table().to_pylist()


def migrate_runs(store: Store, name: str, message: str | None = None) -> PublishResult | None:
    """Rewrite every shard of a runs dataset in the current RunRecord schema, as one commit (nothing when they are
    already): fields a row lacks get their defaults (`accepted` from its status), record ids and every other value
    stay; the rows are validated on the way. The commit before stays reachable by its id."""
    import pyarrow.parquet as pq

    head = store.resolve(name)
    src = store.parquet_source(name, head)
    want = RunRecord.arrow_schema().remove_metadata()
    tables = [pq.read_table(p) for p in src.paths]
    if all(t.schema.remove_metadata().equals(want) for t in tables):
        return None
    rows = []
    for path, t in zip(src.paths, tables):
        for i, row in enumerate(t.to_pylist()):
            rows.append(RunRecord.from_row({**row, "schema_version": SCHEMA_VERSION}, where=f"{path} row {i}: "))
    with tempfile.TemporaryDirectory(prefix="kb-migrate-") as tmp:
        folder = build_runs(rows, Path(tmp) / "runs").folder  # the same shards and card a fresh build writes
        files = {rel: folder / rel for rel in folder_files(folder)}
        result = store.commit(name, CommitPlan(files, message or f"Migrate {len(rows)} run record(s) to schema "
                                               f"{SCHEMA_VERSION}", head, replace=True))
    result.rows_present = len(rows)
    return result


def _comparable(row: dict) -> str:
    return json.dumps({k: v for k, v in row.items()}, sort_keys=True, default=str)


_RUN_DIR_DATE = re.compile(r"run_(\d{4})(\d{2})(\d{2})_")


def _size_category(n: int) -> str:
    return "n<1K" if n < 1000 else "1K<n<10K" if n < 10000 else "10K<n<100K" if n < 100000 else "100K<n<1M"


def runs_card(records: list[RunRecord]) -> str:
    configs = [{"config_name": CONFIG, "default": True, "data_files": [{"split": SPLIT, "path": SHARD_GLOB}]}]
    if records and all(r.source == "audit" for r in records):
        return audit_card(records, configs)  # a dataset of audits only (`kb audit`): its own card
    n = len(records)
    sources = Counter(r.source for r in records)
    upstream = [r for r in records if r.source == "upstream"]
    dates = sorted({"-".join(m.groups()) for r in upstream if r.run_dir and (m := _RUN_DIR_DATE.match(r.run_dir))})
    models = sorted({r.model or "(none)" for r in records})
    per_model = []
    for m in models:
        rs = [r for r in records if (r.model or "(none)") == m]
        per_model.append([m, len(rs), sum(bool(r.compiled) for r in rs), sum(bool(r.correct) for r in rs),
                          sum(bool(r.accepted) for r in rs), ", ".join(sorted({r.gpu for r in rs if r.gpu}, key=gpu_key))])
    flags = Counter(f for r in records for f in (r.flags or []))
    values = {
        "configs_yaml": yaml_block(configs),
        "size_category": _size_category(n),
        "n_records": n,
        "n_upstream": sources.get("upstream", 0),
        "n_local": sources.get("local", 0),
        "n_audit": sources.get("audit", 0),
        "n_models": len(models) if records else 0,
        "n_correct": sum(bool(r.correct) for r in records),
        "n_accepted": sum(bool(r.accepted) for r in records),
        "n_compiled": sum(bool(r.compiled) for r in records),
        "n_gpus": len({r.gpu for r in records if r.gpu}),
        "upstream_span": (f"runs dated {dates[0]} to {dates[-1]}, {len({r.run_dir for r in upstream})} run directories"
                          if dates else "no dated runs"),
        "counts_by_source": md_table(["source", "records"], [[md_code(k), sources[k]] for k in sorted(sources)])
        if records else "No records yet.",
        "counts_by_status": md_table(["status", "records"], [[md_code(k), v] for k, v in
                                                            sorted(Counter(r.status or "(none)" for r in records).items())])
        if records else "No records yet.",
        "counts_by_gpu_level": crosstab(((r.gpu or "(none)", f"level {r.level}" if r.level is not None else "(none)")
                                         for r in records), row_key=gpu_key, row_title="GPU")
        if records else "No records yet.",
        "counts_by_model": md_table(["model", "records", "compiled", "correct", "accepted", "GPUs"], per_model)
        if records else "No records yet.",
        "counts_by_flag": md_table(["flag", "records"], [[md_code(k), flags[k]] for k in sorted(flags)])
        if flags else "No record carries an anomaly flag.",
        "schema_table": schema_markdown(RunRecord),
        "schema_version": SCHEMA_VERSION,
        "citation": UPSTREAM_CITATIONS["kernelbench-v3"] + "\n\n" + UPSTREAM_CITATIONS["kernelbench"],
    }
    return render_card("runs", values)


def audit_card(records: list[RunRecord], configs: list) -> str:
    """The card of a dataset of audit records: what was audited, and both verdicts per model."""
    audited = Counter(f"{md_code(r.audit_dataset)} at {md_code(r.audit_revision)}" for r in records)
    per_model = []
    for m in sorted({r.model or "(none)" for r in records}):
        rs = [r for r in records if (r.model or "(none)") == m]
        per_model.append([m, len(rs), sum(bool(r.audit_published_accepted) for r in rs), sum(r.correct is True for r in rs),
                          sum(bool(r.accepted) for r in rs),
                          sum(bool(r.audit_published_accepted) and not r.accepted for r in rs),
                          sum(not r.audit_published_accepted and bool(r.accepted) for r in rs),
                          sum(r.failure_cause == "environment" for r in rs)])
    flags = Counter(f for r in records for f in (r.flags or []))
    values = {
        "configs_yaml": yaml_block(configs),
        "size_category": _size_category(len(records)),
        "n_records": len(records),
        "audited": "; ".join(f"{k} ({v} records)" for k, v in sorted(audited.items())),
        "audit_gpus": md_text(", ".join(sorted({r.gpu_name or r.gpu for r in records if r.gpu}, key=str))) or "an unknown machine",
        "verdicts": md_table(["model", "audited", "published pass", "correct (published rules)", "accepted (our rules)",
                              "pass -> fail", "fail -> pass", "environment"], per_model),
        "counts_by_status": md_table(["status", "records"], [[md_code(k), v] for k, v in
                                                            sorted(Counter(r.status or "(none)" for r in records).items())]),
        "counts_by_flag": md_table(["flag", "records"], [[md_code(k), flags[k]] for k in sorted(flags)])
        if flags else "No record carries an anomaly flag.",
        "schema_table": schema_markdown(RunRecord),
        "schema_version": SCHEMA_VERSION,
        "citation": UPSTREAM_CITATIONS["kernelbench-v3"] + "\n\n" + UPSTREAM_CITATIONS["kernelbench"],
    }
    return render_card("audit", values)
