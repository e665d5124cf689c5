"""Dataset builders: folder layout, determinism, cards computed from rows, bad input."""
from __future__ import annotations

import json
from pathlib import Path
import re
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.datasets_support import SMALL, folder_bytes, make_root, root, run_records, small_rows  # noqa: F401  (root: fixture)

from kb_data.builders import baselines as bb
from kb_data.builders import problems as pb
from kb_data.builders import runs as rb
from kb_data.builders.common import card_configs, folder_files, front_matter, validate_folder
from kb_data.problems import ProblemError
from kb_data.schema import Problem, RunRecord, SchemaError


@pytest.fixture(scope="module")
def rows_v3(root):
    return small_rows(root, "v3")


@pytest.fixture(scope="module")
def rows_v01(root):
    return small_rows(root, "v0.1")


# ---------------------------------------------------------------------------- problems

CHECKS = pb.problem_checks()


def test_problem_rows_are_the_files(root, rows_v3, rows_v01):
    assert [r.problem_id for r in rows_v01] == ["v0.1/level1/19_ReLU", "v0.1/level1/23_Softmax",
                                                 "v0.1/level2/12_Gemm_Multiply_LeakyReLU"]
    assert len(rows_v3) == len(SMALL["v3"])
    for r in rows_v3 + rows_v01:
        assert isinstance(r, Problem)
        assert r.code == (root / (r.problem_id + ".py")).read_text(encoding="utf-8")
        assert r.rules["suite"] == r.suite
        measured = CHECKS.get((r.problem_id, r.sha256))  # GPU evidence, matched by code hash
        assert r.degenerate == (measured["degenerate"] if measured else None)


def test_problems_folder_layout_and_load(tmp_path, rows_v3):
    import datasets

    res = pb.write_problems(rows_v3, tmp_path / "p", "v3")
    files = folder_files(tmp_path / "p")
    assert files[0] == "README.md" and all(f.startswith("data/") and f.endswith(".parquet") for f in files[1:])
    configs = {c.name: c for c in card_configs((tmp_path / "p" / "README.md").read_text())}
    assert list(configs) == ["all", "RTX3090", "H100", "B200", "M4MAX"]
    assert configs["all"].default and not configs["H100"].default
    assert list(configs["all"].splits) == ["level1", "level2", "graphics", "metal_level1"]  # category order
    assert list(configs["M4MAX"].splits) == ["metal_level1"]
    assert list(configs["H100"].splits) == ["level1", "level2"]
    assert res.splits["RTX3090"] == {"level1": 2, "level2": 1, "graphics": 1}
    validate_folder(tmp_path / "p")

    ds = datasets.load_dataset(str(tmp_path / "p"), cache_dir=str(tmp_path / "cache"))
    assert sorted(ds) == sorted(configs["all"].splits)
    assert sorted(pid for s in ds.values() for pid in s["problem_id"]) == sorted(r.problem_id for r in rows_v3)
    h100 = datasets.load_dataset(str(tmp_path / "p"), "H100", split="level1", cache_dir=str(tmp_path / "cache"))
    assert h100["problem_id"] == ["v3/level1/23_Softmax", "v3/level1/36_RMSNorm_"]
    row = h100[0]
    assert row["rules"]["tolerances"][0] == {"precision": "fp32", "atol": 1e-3, "rtol": 1e-3}
    assert row["inputs"][0]["shape"] and row["inputs"][0]["dtype"]


def test_problems_build_is_deterministic(tmp_path, root, rows_v3):
    a = pb.write_problems(rows_v3, tmp_path / "a", "v3").folder
    b = pb.write_problems(list(reversed(rows_v3)), tmp_path / "b", "v3").folder  # input order does not matter
    assert folder_bytes(a) == folder_bytes(b)
    # a full build (fresh analysis, then from the row cache) gives the same bytes again
    cache = tmp_path / "cache"
    c = pb.build_problems(tmp_path / "c", "v3", root, cache=cache, workers=1).folder
    assert list((cache / "problem_rows").glob("*.json"))
    d = pb.build_problems(tmp_path / "d", "v3", root, cache=cache, workers=1).folder
    assert folder_bytes(a) == folder_bytes(c) == folder_bytes(d)
    card = (a / "README.md").read_text()
    assert not re.search(r"20\d\d-\d\d-\d\dT", card)  # no timestamps


def test_problems_card_numbers_come_from_rows(tmp_path, rows_v3, rows_v01):
    pb.write_problems(rows_v3, tmp_path / "v3", "v3")
    card = (tmp_path / "v3" / "README.md").read_text()
    meta = front_matter(card)
    assert meta["license"] == "cc-by-4.0" and meta["pretty_name"] and "kernelbench" in meta["tags"]
    assert f"**{len(rows_v3)} problems**" in card
    # per-config table: one line per config, counts per category and a total
    cats = Counter(r.category for r in rows_v3)
    line = next(l for l in card.splitlines() if l.startswith("| `all` |"))
    assert line == "| `all` | " + " | ".join(str(cats[c]) for c in ["level1", "level2", "graphics", "metal_level1"]) + f" | {len(rows_v3)} |"
    gpu_counts = Counter(g for r in rows_v3 for g in r.gpus)
    for gpu, n in gpu_counts.items():
        assert f"| `{gpu}` | {n} |" in card
    assert 'revision="v3"' in card and "Arledge" in card and "Ouyang" in card and "CC-BY-4.0" in card
    assert "| correctness seeds | 42, 123, 456, 789, 1337 |" in card  # rules from the rows
    assert "| `problem_id` | string |" in card  # schema table

    pb.write_problems(rows_v01, tmp_path / "v01", "v0.1")
    card01 = (tmp_path / "v01" / "README.md").read_text()
    assert front_matter(card01)["license"] == "mit"
    assert [c["config_name"] for c in front_matter(card01)["configs"]] == ["all"]  # v0.1 lists no GPUs
    assert "| correctness check | `allclose` |" in card01 and "MIT" in card01


def test_one_suite_per_revision(tmp_path, rows_v3, rows_v01):
    with pytest.raises(ValueError, match="one revision holds one suite"):
        pb.write_problems(rows_v3 + rows_v01, tmp_path / "x", "v3")
    with pytest.raises(ValueError, match="duplicate problem id"):
        pb.write_problems(rows_v3 + rows_v3[:1], tmp_path / "x", "v3")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("body, reason", [
    ("def broken(:\n", "syntax error"),
    ("import torch\nraise RuntimeError('boom at import')\n", "boom at import"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\n", "does not define get_inputs"),
    ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x @ torch.ones(3, 3)\n"
     "def get_inputs():\n    return [torch.randn(4, 5)]\ndef get_init_inputs():\n    return []\n",
     "does not run on meta"),
])
def test_broken_problem_stops_the_build_with_its_path(tmp_path, body, reason):
    make_root(tmp_path / "root", {"v3": ["level1/23_Softmax.py"]})
    bad = tmp_path / "root" / "v3" / "level1" / "99_Broken.py"
    bad.write_text(body)
    with pytest.raises(ProblemError) as e:
        pb.build_problems(tmp_path / "out", "v3", tmp_path / "root", cache=False, workers=1)
    assert str(bad) in str(e.value) and reason in str(e.value)
    assert not (tmp_path / "out").exists()


def test_out_folder_is_replaced_only_if_it_is_a_dataset(tmp_path, rows_v3):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a dataset folder"):
        pb.write_problems(rows_v3, out, "v3")
    assert (out / "notes.txt").read_text() == "mine"
    pb.write_problems(rows_v3, tmp_path / "ds", "v3")
    pb.write_problems(rows_v3[:2], tmp_path / "ds", "v3")  # a rebuild replaces the old files
    assert sum(pq.ParquetFile(tmp_path / "ds" / f).metadata.num_rows for f in folder_files(tmp_path / "ds")
               if f.startswith("data/all/")) == 2


# ---------------------------------------------------------------------------- runs

def test_runs_build_deterministic_and_sharded_by_record_ids(tmp_path):
    recs = run_records(10)
    a = rb.build_runs(recs, tmp_path / "a")
    b = rb.build_runs(list(reversed(recs)) + recs[:3], tmp_path / "b")  # order and exact repeats do not matter
    assert folder_bytes(a.folder) == folder_bytes(b.folder)
    shards = [f for f in folder_files(a.folder) if f != "README.md"]
    assert shards == [rb.shard_path(r["record_id"] for r in recs)]
    table = pq.read_table(a.folder / shards[0])
    assert table.column("record_id").to_pylist() == sorted(r["record_id"] for r in recs)
    assert table.schema.metadata[b"kb_data.record"] == b"RunRecord"
    card = (a.folder / "README.md").read_text()
    assert "**10 records**: 0 imported" in card and "CC-BY-4.0" in card
    assert front_matter(card)["configs"] == [{"config_name": "default", "default": True,
                                              "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}]


def test_runs_append_plan_adds_only_new_records(tmp_path):
    first = [RunRecord.from_row(r).to_row() for r in run_records(5)]
    plan = rb.plan_append(first, run_records(5), tmp_path / "s1")
    assert plan.empty and plan.already_present == 5 and not plan.files
    plan = rb.plan_append(first, run_records(8), tmp_path / "s2")
    assert [r.record_id for r in plan.new] == [f"local-{i:05d}" for i in range(5, 8)]
    assert sorted(plan.files) == ["README.md", rb.shard_path(f"local-{i:05d}" for i in range(5, 8))]
    assert "**8 records**" in plan.files["README.md"].read_text()
    changed = run_records(1, model="someone else")
    assert rb.plan_append(first, changed, tmp_path / "s3").conflicts == ["local-00000"]


def test_runs_card_counts(tmp_path):
    recs = run_records(12)
    rb.build_runs(recs, tmp_path / "r")
    card = (tmp_path / "r" / "README.md").read_text()
    correct = sum(r["correct"] for r in recs)
    accepted = sum(RunRecord.from_row(r).accepted for r in recs)
    assert f"12 compiled, {correct} correct and {accepted} accepted" in card.replace("\n", " ")
    assert "**Correct and accepted are two columns.**" in card
    for model, n in Counter(r["model"] for r in recs).items():
        ok = sum(r["correct"] for r in recs if r["model"] == model)
        acc = sum(RunRecord.from_row(r).accepted for r in recs if r["model"] == model)
        assert re.search(rf"\| {model} \| {n} \| {n} \| {ok} \| {acc} \|", card)


@pytest.mark.parametrize("override, field", [
    ({"status": "great"}, "RunRecord.status"),
    ({"speedup": "fast"}, "RunRecord.speedup"),
    ({"record_id": None}, "RunRecord.record_id"),
    ({"flags": ["made_up_flag"]}, "RunRecord.flags"),
    ({"no_such_field": 1}, "unknown field"),
    ({"solution_code": "x = '\ud800'\n"}, "RunRecord.solution_code: not Unicode text"),  # a JSON "\\ud800"
])
def test_malformed_run_record_is_refused_with_row_and_field(tmp_path, override, field):
    recs = run_records(4)
    recs[2].update(override)
    with pytest.raises(SchemaError) as e:
        rb.build_runs(recs, tmp_path / "r")
    assert "row 2" in str(e.value) and field in str(e.value)
    assert not (tmp_path / "r").exists()


def test_conflicting_records_with_one_id_are_refused(tmp_path):
    recs = run_records(2) + run_records(1, model="other")
    with pytest.raises(SchemaError, match="local-00000.*two different records"):
        rb.build_runs(recs, tmp_path / "r")


# ---------------------------------------------------------------------------- baselines

def _baseline(pid="v3/level1/23_Softmax", gpu="H100", **kw) -> dict:
    row = {"problem_id": pid, "suite": pid.split("/")[0], "gpu": gpu, "eager_ms": 1.0, "compile_ms": 0.5,
           "baseline_ms": 0.5, "baseline_type": "torch_compile", "source": "measured", "torch_version": "2.13.0",
           "cuda_version": "12.8"}
    row.update(kw)
    return row


def test_baselines_split_per_gpu_and_card(tmp_path):
    rows = [_baseline(gpu=g, problem_id=p) for g in ("H100", "B200", "H200") for p in
            ("v3/level1/23_Softmax", "v3/level1/36_RMSNorm_")]
    rows.append(_baseline(gpu="H100", source="derived", baseline_type="pytorch", n_records=7))
    a = bb.build_baselines(rows, tmp_path / "a")
    b = bb.build_baselines(list(reversed(rows)), tmp_path / "b")
    assert folder_bytes(a.folder) == folder_bytes(b.folder)
    assert a.splits == {"default": {"H100": 3, "H200": 2, "B200": 2}}
    card = (a.folder / "README.md").read_text()
    assert "**7 rows**" in card and "6 measured" in card and "1 derived" in card
    assert "| `H100` | 3 | 2 | 2 | 1 |" in card
    validate_folder(a.folder)


def test_baseline_jsonl_errors_name_file_line_and_field(tmp_path):
    f = tmp_path / "baselines_test.jsonl"
    f.write_text(json.dumps(_baseline()) + "\n" + json.dumps(_baseline(eager_ms="slow")) + "\n")
    with pytest.raises(SchemaError) as e:
        bb.measured_baseline_rows(tmp_path)
    assert f"{f}:2" in str(e.value) and "Baseline.eager_ms" in str(e.value)


def test_validate_folder_refuses_schema_drift(tmp_path):
    rb.build_runs(run_records(3), tmp_path / "r")
    shard = next((tmp_path / "r" / "data").glob("*.parquet"))
    t = pq.read_table(shard)
    pq.write_table(t.drop_columns(["model"]), shard)
    with pytest.raises(SchemaError, match="'model' is missing"):
        validate_folder(tmp_path / "r")
    pq.write_table(t.set_column(t.schema.get_field_index("status"), "status",
                                pa.array(["incorrect", "nope", "ok"])), shard)
    with pytest.raises(SchemaError, match=r"row 1: RunRecord.status"):
        validate_folder(tmp_path / "r")
    # accepted is derived from status: a row that says otherwise is refused, not silently re-derived
    pq.write_table(t.set_column(t.schema.get_field_index("status"), "status", pa.array(["ok", "ok", "ok"])), shard)
    with pytest.raises(SchemaError, match=r"row 0: RunRecord.accepted is False but status is 'ok'"):
        validate_folder(tmp_path / "r")


def test_shipped_sweep_builds(tmp_path):
    """The shipped upstream sweep imports and builds (runs + derived baselines)."""
    recs = rb.shipped_runs()
    res = rb.build_runs(recs, tmp_path / "runs")
    assert res.rows == len({r.record_id for r in recs}) > 0
    card = (tmp_path / "runs" / "README.md").read_text()
    assert f"{res.rows} imported from the published" in card
    rows = bb.shipped_baselines(recs)
    measured = bb.measured_baseline_rows()
    derived = [r for r in rows if r.source == "derived"]
    assert len(rows) == len(measured) + len(derived) and derived
    assert {r.gpu for r in derived} <= {"RTX3090", "H100", "B200"}  # the sweep's GPUs
    bl = bb.build_baselines(rows, tmp_path / "bl")
    assert bl.rows == len(rows) and sum(bl.splits["default"].values()) == len(rows)
    card = (tmp_path / "bl" / "README.md").read_text()
    assert f"{len(measured)} measured" in card and f"{len(derived)} derived" in card


def test_worker_processes_give_the_same_rows_and_contain_crashes(tmp_path, root, rows_v3):
    rows = pb.collect_rows("v3", root, cache=False, workers=2)
    assert [r.to_row() for r in rows] == [r.to_row() for r in rows_v3]
    make_root(tmp_path / "r", {"v3": ["level1/23_Softmax.py", "level1/36_RMSNorm_.py"]})
    bad = tmp_path / "r" / "v3" / "level1" / "98_Exits.py"
    bad.write_text("import os\nos._exit(3)\n")
    with pytest.raises(ProblemError, match=rf"{re.escape(str(bad))}: the analysis worker died \(exit code 3\)"):
        pb.collect_rows("v3", tmp_path / "r", cache=False, workers=2)


def test_a_problem_one_gpu_found_degenerate_stays_degenerate_whatever_another_found(tmp_path):
    """Two GPUs' checks of the same code: the one that found the output degenerate stands, in either file order; other
    code's checks stay apart."""
    row = lambda gpu, sha, degenerate: {"problem_id": "v3/level1/9_X", "problem_sha256": sha, "gpu": gpu,
                                        "degenerate": degenerate, "degenerate_reason": "equals one of its inputs"
                                        if degenerate else None}
    for first, second in ((True, False), (False, True)):
        data = tmp_path / f"{first}"
        data.mkdir()
        (data / "problem_checks_a100.jsonl").write_text(json.dumps(row("A100", "s1", first)) + "\n")
        (data / "problem_checks_h100.jsonl").write_text(json.dumps(row("H100", "s1", second)) + "\n"
                                                        + json.dumps(row("H100", "s2", False)) + "\n")
        checks = pb.problem_checks(data)
        assert checks[("v3/level1/9_X", "s1")]["degenerate"] is True
        assert checks[("v3/level1/9_X", "s1")]["degenerate_reason"] == "equals one of its inputs"
        assert checks[("v3/level1/9_X", "s2")]["degenerate"] is False and len(checks) == 2


def test_gpu_evidence_attaches_only_to_the_code_it_was_measured_on(tmp_path):
    real = Path(__file__).resolve().parents[1] / "problems"
    rows = pb.collect_rows("v3", real, ids=["v3/level1/40_LayerNorm", "v3/level1/23_Softmax"], cache=False)
    by_id = {r.problem_id: r for r in rows}
    assert by_id["v3/level1/40_LayerNorm"].degenerate is True and "equals one of its inputs" in by_id["v3/level1/40_LayerNorm"].degenerate_reason
    assert by_id["v3/level1/23_Softmax"].degenerate is False
    edited = tmp_path / "problems" / "v3" / "level1"
    edited.mkdir(parents=True)
    (edited / "40_LayerNorm.py").write_text((real / "v3" / "level1" / "40_LayerNorm.py").read_text() + "\n# edited\n")
    (row,) = pb.collect_rows("v3", tmp_path / "problems", cache=False)
    assert row.degenerate is None  # evidence about another version of the file is not reused


def test_shipped_h200_split_loads_with_one_row_per_problem_and_timing_method(tmp_path):
    """The built H200 split through the real `datasets`: rows of the two timing methods side by side, never two of
    one method for a problem; filtering on `timing_method` gives each suite's problems once, and the calibration
    struct survives Parquet with its nulls (rows measured before it existed)."""
    from datasets import load_dataset

    bb.build_baselines(bb.measured_baseline_rows(), tmp_path / "bl")
    ds = load_dataset(str(tmp_path / "bl"), split="H200")
    keys = Counter(zip(ds["problem_id"], ds["timing_method"]))
    assert keys and max(keys.values()) == 1
    current = ds.filter(lambda r: r["timing_method"] == "flush_queued")
    by_suite = Counter(current["suite"])
    assert by_suite["v3"] == 60 and by_suite["v0.1"] >= 250
    assert Counter(ds["timing_method"]) == {"flush_queued": len(current), "device_synced": len(ds) - len(current)}
    cal = [c for c in current["calibration"] if c is not None]
    assert len(cal) >= 250 and all(set(c) == {"gemm_ms", "copy_ms", "launch_ms"} and c["copy_ms"] > 0.4 for c in cal)
    assert all(c is None for c in ds.filter(lambda r: r["timing_method"] == "device_synced")["calibration"])


def test_built_files_get_the_mode_of_a_file_opened_for_writing(tmp_path):
    """The atomic writers go through a temp file, which mkstemp makes 0600; a built dataset's files must come out
    as any new file would (0644 under the usual umask), or nobody but their owner can read a shared build."""
    import stat

    from kb_data.store import FILE_MODE

    bb.build_baselines([_baseline()], tmp_path / "bl")
    files = [f for f in (tmp_path / "bl").rglob("*") if f.is_file()]
    assert {f.suffix for f in files} >= {".md", ".parquet"}
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {FILE_MODE}
    with open(tmp_path / "plain", "wb"):
        pass
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == FILE_MODE


def test_runs_shards_keep_the_solution_code(tmp_path):
    """What we publish can be audited later: the solution's source and its hash reach the Parquet shards."""
    import hashlib

    import pyarrow.parquet as pq

    code = "import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
    sha = hashlib.sha256(code.encode("utf-8")).hexdigest()
    rb.build_runs(run_records(3, solution_code=code, solution_sha256=sha), tmp_path / "r")
    shards = sorted((tmp_path / "r" / "data").glob("*.parquet"))
    rows = [r for s in shards for r in pq.read_table(s, columns=["solution_code", "solution_sha256", "accepted"]).to_pylist()]
    assert len(rows) == 3 and all(r["solution_code"] == code and r["solution_sha256"] == sha for r in rows)
    assert [r["accepted"] for r in rows] == [False, True, True]  # derived from status: record 0 is incorrect
