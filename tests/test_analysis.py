"""The analysis API, checked against plain-Python computations on hand-made and on the published records."""
from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest

from kb_data import analysis as A
from kb_data.schema import RunRecord, to_table
from tests.runs_support import stub_problems, upstream_df, upstream_records, upstream_rows  # noqa: F401


def rec(i, model="m1", gpu="H100", problem="p1", correct=True, speedup=None, bt="pytorch_eager", **kw) -> RunRecord:
    """A small run record; speedup given means correct unless said otherwise."""
    compiled = kw.pop("compiled", True) or correct
    status = kw.pop("status", "ok" if correct else ("incorrect" if compiled else "compile_error"))
    fields = dict(record_id=f"r{i:03d}", model=model, gpu=gpu, level=1, problem=problem + ".py",
                  problem_id=f"v3/level1/{problem}", compiled=compiled, correct=correct, status=status,
                  speedup=speedup if correct else None, baseline_type=bt if correct else None,
                  source="local", suite="v3")
    fields.update(kw)
    return RunRecord(**fields)


def frame(records) -> pd.DataFrame:
    return to_table(records).to_pandas()


def rows_by(table: pd.DataFrame, keys) -> dict:
    """{key tuple: row dict}; a null key becomes None."""
    out = {}
    for row in table.to_dict("records"):
        k = tuple(None if (isinstance(row[c], float) and math.isnan(row[c])) or row[c] is pd.NA else row[c] for c in keys)
        assert k not in out, f"duplicate row {k}"
        out[k] = row
    return out


# ---------------------------------------------------------------------------
# Hand-made frames

SMALL = [
    rec(1, speedup=0.5), rec(2, problem="p2", speedup=1.2), rec(3, problem="p3", speedup=3.0, bt="torch_compile"),
    rec(4, problem="p4", correct=False), rec(5, problem="p5", correct=False, compiled=False),
    rec(6, model="m2", speedup=2.0, bt="pytorch"), rec(7, model="m2", problem="p2", correct=False),
    rec(8, model="m3", correct=False),  # a group with no correct attempt
]


def test_fast_p_small():
    t = A.fast_p(frame(SMALL), 1.0)
    got = rows_by(t, ["model", "gpu", "baseline_type"])
    assert set(got) == {("m1", "H100", "pytorch_eager"), ("m1", "H100", "torch_compile"),
                        ("m2", "H100", "pytorch"), ("m3", "H100", None)}
    assert got[("m1", "H100", "pytorch_eager")]["fast_p"] == 1 / 5  # 1.2 > 1; 0.5 is not; 5 attempts
    assert got[("m1", "H100", "torch_compile")]["fast_p"] == 1 / 5
    assert got[("m2", "H100", "pytorch")]["fast_p"] == 1 / 2
    assert got[("m3", "H100", None)]["fast_p"] == 0 and got[("m3", "H100", None)]["n_attempts"] == 1
    assert {k: r["n_accepted"] for k, r in got.items()} == {
        ("m1", "H100", "pytorch_eager"): 2, ("m1", "H100", "torch_compile"): 1, ("m2", "H100", "pytorch"): 1,
        ("m3", "H100", None): 0}


def test_fast_p_is_strictly_greater():
    t = A.fast_p(frame([rec(1, speedup=1.0), rec(2, problem="p2", speedup=1.0000001)]), 1.0)
    assert t["n_fast"].tolist() == [1]


def test_rejected_record_is_correct_but_not_accepted():
    df = frame([rec(1, speedup=5.0, status="rejected", flags=["timer_tampered"]), rec(2, problem="p2", speedup=2.0)])
    t = A.fast_p(df, 1.0)
    assert t["n_accepted"].tolist() == [1] and t["fast_p"].tolist() == [0.5]
    c = A.correctness(df)
    assert c["n_accepted"].tolist() == [1] and c["n_correct"].tolist() == [2] and c["n_rejected"].tolist() == [1]


def test_rows_before_schema_1_5_get_accepted_on_read():
    """A frame without the accepted column (an older Parquet shard): status ok, else upstream's correct."""
    df = frame([rec(1, speedup=2.0), rec(2, problem="p2", speedup=3.0, status="rejected"),
                rec(3, problem="p3", speedup=4.0, status=None)]).drop(columns=["accepted"])
    assert A.is_accepted(df).tolist() == [True, False, True]
    assert A.fast_p(df, 1.0)["n_accepted"].tolist() == [2]


def test_a_record_graded_with_checks_left_out_counts_as_no_kernels_success():
    """Red team, session 41: `kb eval --allow-framework --out`, then `kb publish runs`, counted the framework's own
    op in fast_p as an accepted kernel."""
    df = frame([rec(1, speedup=2.0), rec(2, problem="p2", speedup=3.0)])
    df.loc[1, "flag_details"] = '{"checks_off": ["framework ops allowed (require_custom_kernel off)"]}'
    assert A.is_accepted(df).tolist() == [True, False]
    assert A.fast_p(df, 1.0)["n_accepted"].tolist() == [1]
    df.loc[0, "flag_details"] = df.loc[1, "flag_details"]  # none accepted (the README's --allow-framework record)
    summary = A.fast_p_summary(df)
    assert summary["n_accepted"].tolist() == [0] and summary["n_attempts"].tolist() == [2]


def _random_records(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        ok = bool(rng.random() < 0.5)
        out.append(rec(i, model=f"m{rng.integers(3)}", gpu=["H100", "B200"][rng.integers(2)], problem=f"p{rng.integers(6)}",
                       correct=ok, speedup=float(rng.lognormal(0, 1)) if ok else None,
                       bt=["pytorch", "pytorch_eager", "torch_compile"][rng.integers(3)],
                       run_dir=f"run_2026030{rng.integers(1, 9)}_1200{rng.integers(10, 60)}",
                       compiled=bool(rng.random() < 0.5), total_tokens=int(rng.integers(1000, 9000)),
                       estimated_cost_usd=None if rng.random() < 0.3 else float(rng.random()),
                       flags=[None, [], ["excessive_speedup"], ["timer_tampered", "nondeterministic"]][rng.integers(4)]))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tables_match_a_plain_loop(seed):
    records = _random_records(300, seed)
    df = frame(records)
    ps = [0, 0.5, 1, 2]
    attempts = Counter((r.model, r.gpu) for r in records)

    # fast_p, by model x gpu x baseline_type
    got = rows_by(A.fast_p_table(df, ps), ["model", "gpu", "baseline_type"])
    fast = defaultdict(Counter)
    for r in records:
        if r.correct:
            for p in ps:
                fast[(r.model, r.gpu, r.baseline_type)][p] += r.speedup > p
            fast[(r.model, r.gpu, r.baseline_type)]["n"] += 1
    assert set(got) == set(fast) | {(m, g, None) for m, g in attempts if not any(k[:2] == (m, g) for k in fast)}
    for key, c in fast.items():
        row = got[key]
        assert row["n_attempts"] == attempts[key[:2]] and row["n_accepted"] == c["n"]
        for p in ps:
            assert row[A.p_label(p)] == pytest.approx(c[p] / attempts[key[:2]], abs=0)

    # geometric mean over correct records
    got = rows_by(A.geomean_speedup(df), ["model", "gpu", "baseline_type"])
    speeds = defaultdict(list)
    for r in records:
        if r.correct:
            speeds[(r.model, r.gpu, r.baseline_type)].append(r.speedup)
    assert set(got) == set(speeds)
    for key, s in speeds.items():
        assert got[key]["geomean_speedup"] == pytest.approx(statistics.geometric_mean(s), rel=1e-12)
        assert got[key]["median_speedup"] == pytest.approx(statistics.median(s), rel=1e-12)
        assert (got[key]["n_accepted"], got[key]["max_speedup"]) == (len(s), max(s))

    # correct / total
    got = rows_by(A.correctness(df), ["model", "gpu"])
    for key, n in attempts.items():
        grp = [r for r in records if (r.model, r.gpu) == key]
        assert got[key]["n_attempts"] == n
        assert got[key]["n_correct"] == got[key]["n_accepted"] == sum(r.correct for r in grp)
        assert got[key]["n_compiled"] == sum(r.compiled for r in grp)
        assert got[key]["correct_rate"] == pytest.approx(sum(r.correct for r in grp) / n)
        assert got[key]["n_incorrect"] == sum(r.status == "incorrect" for r in grp)

    # cost and tokens per correct kernel (over attempts whose value is known)
    got = rows_by(A.cost(df), ["model", "gpu"])
    for key in attempts:
        grp = [r for r in records if (r.model, r.gpu) == key]
        priced = [r for r in grp if r.estimated_cost_usd is not None]
        n_ok = sum(r.correct for r in priced)
        expect = sum(r.estimated_cost_usd for r in priced) / n_ok if n_ok else None
        if expect is None:
            assert math.isnan(got[key]["cost_usd_per_accepted"])
        else:
            assert got[key]["cost_usd_per_accepted"] == pytest.approx(expect, rel=1e-12)
        assert got[key]["n_cost_usd_known"] == len(priced)
        assert got[key]["tokens_per_accepted"] == pytest.approx(sum(r.total_tokens for r in grp) / sum(r.correct for r in grp))

    # anomaly flags
    got = rows_by(A.flag_counts(df), ["model", "gpu"])
    for key in attempts:
        grp = [r for r in records if (r.model, r.gpu) == key]
        assert got[key]["n_checked"] == sum(r.flags is not None for r in grp)
        assert got[key]["n_flagged"] == sum(bool(r.flags) for r in grp)
        assert got[key]["timer_tampered"] == sum("timer_tampered" in (r.flags or []) for r in grp)


def test_fast_p_curve_is_the_long_form():
    df = frame(_random_records(200, 7))
    ps = [0.0, 1.0, 1.5]
    curve = A.fast_p_curve(df, ps)
    wide = A.fast_p_table(df, ps)
    assert len(curve) == len(wide) * len(ps)
    for p in ps:
        at = curve[curve["p"] == p].reset_index(drop=True)
        assert at["fast_p"].tolist() == wide[A.p_label(p)].tolist()
    # non-increasing in p within each (group, baseline_type)
    assert (curve.groupby(["model", "gpu", "baseline_type"], dropna=False)["fast_p"].diff().dropna() <= 0).all()


def test_baseline_types_are_never_mixed():
    df = frame(SMALL)
    for t in (A.fast_p_table(df), A.geomean_speedup(df)):
        assert "baseline_type" in t.columns
    g = rows_by(A.geomean_speedup(df), ["model", "gpu", "baseline_type"])
    # 0.5 and 1.2 against eager; 3.0 against compile: no row averages across them
    assert g[("m1", "H100", "pytorch_eager")]["geomean_speedup"] == pytest.approx(math.sqrt(0.5 * 1.2))
    assert g[("m1", "H100", "torch_compile")]["geomean_speedup"] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="baseline_type is always a grouping key"):
        A.fast_p(df, 1.0, by=["model", "baseline_type"])


def test_op_type_taken_from_the_problem():
    df = frame([rec(1, speedup=1.0, op_type="gemm"), rec(2, correct=False), rec(3, problem="p9", correct=False)])
    got = rows_by(A.correctness(df, ["op_type"]), ["op_type"])
    assert got[("gemm",)]["n_attempts"] == 2 and got[(None,)]["n_attempts"] == 1
    assert df["op_type"].isna().sum() == 2  # the frame itself is not changed


def test_unknown_group_column():
    with pytest.raises(ValueError, match="no column"):
        A.correctness(frame(SMALL), ["nope"])


def test_minimal_frame_is_enough():
    """Only the columns a table needs: what a user's own DataFrame may have."""
    df = pd.DataFrame({"model": ["a", "a", "b"], "gpu": ["H100"] * 3, "correct": [True, False, True],
                       "speedup": [2.0, None, 0.5], "baseline_type": ["torch_compile", None, "torch_compile"]})
    t = A.fast_p_table(df, [1])
    assert t["fast_1"].tolist() == [0.5, 0.0]


# ---------------------------------------------------------------------------
# Dedup

def test_dedup_policies_small():
    records = [
        rec(1, speedup=3.0, run_dir="run_20260301_000000"),
        rec(2, speedup=1.5, run_dir="run_20260305_000000"),
        rec(3, correct=False, run_dir="run_20260309_000000"),
        # created_at wins over the run_dir timestamp
        rec(4, problem="p2", correct=False, run_dir="run_20260310_000000"),
        rec(5, problem="p2", speedup=1.1, created_at="2026-03-11T08:00:00Z"),
        # correct records against different baselines: best takes the latest correct one
        rec(6, problem="p3", speedup=9.0, bt="pytorch", run_dir="run_20260226_000000"),
        rec(7, problem="p3", speedup=1.2, bt="torch_compile", run_dir="run_20260317_000000"),
        rec(8, problem="p3", correct=False, run_dir="run_20260318_000000"),
        # never solved: best keeps the latest attempt
        rec(9, problem="p4", correct=False, run_dir="run_20260301_000000"),
        rec(10, problem="p4", correct=False, run_dir="run_20260302_000000"),
        # equal times: the larger record_id
        rec(11, problem="p5", correct=False, run_dir="run_20260301_000000"),
        rec(12, problem="p5", correct=False, run_dir="run_20260301_000000"),
    ]
    df = frame(records)
    ids = lambda d: sorted(d["record_id"])  # noqa: E731
    assert ids(A.dedup(df, "all")) == ids(df)
    assert ids(A.dedup(df, "latest")) == ["r003", "r005", "r008", "r010", "r012"]
    assert ids(A.dedup(df, "best")) == ["r001", "r005", "r007", "r010", "r012"]
    shuffled = df.sample(frac=1, random_state=3)
    for policy in ("latest", "best"):
        assert ids(A.dedup(shuffled, policy)) == ids(A.dedup(df, policy))
    with pytest.raises(ValueError, match="unknown dedup policy"):
        A.dedup(df, "first")


def _plain_dedup(rows, policy):
    """Keys (run_dir, model, gpu, problem) of the rows each policy keeps, by a straightforward loop."""
    triples = defaultdict(list)
    for r in rows:
        triples[(r["model"], r["gpu"], r["problem"])].append(r)
    kept = set()
    for group in triples.values():
        ok = [r for r in group if r["correct"] == "True"]
        if policy == "latest" or not ok:
            pick = max(group, key=lambda r: r["run_dir"])
        elif len({r["baseline_type"] for r in ok}) > 1:
            pick = max(ok, key=lambda r: r["run_dir"])
        else:
            pick = max(ok, key=lambda r: float(r["speedup"]))
        kept.add((pick["run_dir"], pick["model"], pick["gpu"], pick["problem"]))
    return kept


@pytest.mark.parametrize("policy", ["latest", "best"])
def test_dedup_on_the_published_sweep(upstream_df, upstream_rows, policy):
    d = A.dedup(upstream_df, policy)
    got = set(zip(d["run_dir"], d["model"], d["gpu"], d["problem"]))
    assert got == _plain_dedup(upstream_rows, policy)
    assert len(d) == len({(r["model"], r["gpu"], r["problem"]) for r in upstream_rows}) == 1972


# ---------------------------------------------------------------------------
# Spot values on the published sweep (expected values by plain loops over the CSV text)

def test_fast_p_on_the_published_sweep(upstream_df, upstream_rows):
    for p in (0.0, 1.0, 2.0):
        got = rows_by(A.fast_p(upstream_df, p), ["model", "gpu", "baseline_type"])
        attempts = Counter((r["model"], r["gpu"]) for r in upstream_rows)
        fast = Counter((r["model"], r["gpu"], r["baseline_type"]) for r in upstream_rows
                       if r["correct"] == "True" and float(r["speedup"]) > p)
        for (m, g, bt), row in got.items():
            assert row["fast_p"] == fast[(m, g, bt)] / attempts[(m, g)]
        assert sum(fast.values()) == sum(row["n_fast"] for row in got.values())


def test_geomean_and_correctness_on_the_published_sweep(upstream_df, upstream_rows):
    got = rows_by(A.geomean_speedup(upstream_df, ["gpu"]), ["gpu", "baseline_type"])
    speeds = defaultdict(list)
    for r in upstream_rows:
        if r["correct"] == "True":
            speeds[(r["gpu"], r["baseline_type"])].append(float(r["speedup"]))
    assert set(got) == set(speeds)
    for key, s in speeds.items():
        assert got[key]["geomean_speedup"] == pytest.approx(math.exp(sum(map(math.log, s)) / len(s)), rel=1e-12)

    got = rows_by(A.correctness(upstream_df, ["level"]), ["level"])
    for level in "1234":
        grp = [r for r in upstream_rows if r["level"] == level]
        assert got[(int(level),)]["n_attempts"] == len(grp)
        assert got[(int(level),)]["n_correct"] == sum(r["correct"] == "True" for r in grp)
        assert got[(int(level),)]["n_compile_error"] == sum(r["compiled"] == "False" for r in grp)


def test_cost_on_the_published_sweep(upstream_df, upstream_rows):
    got = rows_by(A.cost(upstream_df, ["model"]), ["model"])
    for model in {r["model"] for r in upstream_rows}:
        priced = [r for r in upstream_rows if r["model"] == model and r["estimated_cost_usd"]]
        n_ok = sum(r["correct"] == "True" for r in priced)
        row = got[(model,)]
        assert row["n_cost_usd_known"] == len(priced)
        if n_ok:
            assert row["cost_usd_per_accepted"] == pytest.approx(sum(float(r["estimated_cost_usd"]) for r in priced) / n_ok)
        else:
            assert math.isnan(row["cost_usd_per_accepted"])
    assert math.isnan(got[("GPT-5.4",)]["cost_usd"])  # priced outside the router: unknown, not zero


def test_flags_on_the_published_sweep(upstream_df):
    t = A.flag_counts(upstream_df)
    assert t["n_checked"].sum() == 0 and t["n_attempts"].sum() == 2071


# ---------------------------------------------------------------------------
# Loading

def test_load_records_migrates_rows_before_schema_1_5(tmp_path):
    """A Parquet shard written before 1.5 (no accepted column) and a JSONL line without it read as 1.5 rows."""
    import pyarrow.parquet as pq

    old = [rec(1, speedup=2.0), rec(2, problem="p2", speedup=3.0, status="rejected", flags=["timer_tampered"])]
    pq.write_table(to_table(old).drop_columns(["accepted", "failure_cause", "audit_of", "audit_dataset",
                                               "audit_revision", "audit_published_accepted"]), tmp_path / "old.parquet")
    row = rec(3, problem="p3", correct=False).to_row()
    del row["accepted"]
    (tmp_path / "old.jsonl").write_text(json.dumps(dict(row, schema_version="1.3")) + "\n")
    df = A.load_records(tmp_path).set_index("record_id")
    assert df["accepted"].to_dict() == {"r001": True, "r002": False, "r003": False}
    assert df["correct"].to_dict() == {"r001": True, "r002": True, "r003": False}  # correct as it was written
    assert df.loc["r003", "schema_version"] == "1.3"  # the row keeps the version that wrote it


def test_load_records_parquet_jsonl_and_folder(tmp_path):
    import pyarrow.parquet as pq

    records = _random_records(40, 3)
    pq.write_table(to_table(records[:25]), tmp_path / "a.parquet")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_text("\n".join(json.dumps(r.to_row()) for r in records[25:]) + "\n")
    df = A.load_records(tmp_path)
    assert sorted(df["record_id"]) == sorted(r.record_id for r in records)
    assert A.load_records(tmp_path / "a.parquet")["record_id"].tolist() == [r.record_id for r in records[:25]]
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "c.jsonl").write_text(json.dumps({"record_id": "x", "gpu": 3}) + "\n")
    with pytest.raises(Exception, match=r"c\.jsonl:1: "):
        A.load_records(bad)


def test_time_columns_load_as_timestamps(tmp_path):
    """created_at is an ISO-8601 string in the Arrow schema and a UTC timestamp in pandas."""
    import pyarrow.parquet as pq

    recs = [rec(i, speedup=1.5, created_at=f"2026-03-1{i}T08:00:00+00:00") for i in range(2)]
    pq.write_table(to_table(recs), tmp_path / "a.parquet")
    df = A.load_records(tmp_path / "a.parquet")
    assert isinstance(df["created_at"].dtype, pd.DatetimeTZDtype) and str(df["created_at"].dt.tz) == "UTC"
    assert (df["created_at"].diff().dropna() == pd.Timedelta(days=1)).all()
    assert A.recency(df).tolist() == ["2026-03-10T08:00:00", "2026-03-11T08:00:00"]


def test_fast_p_summary_is_one_row_per_model_and_gpu():
    df = to_table([rec(1, speedup=1.2), rec(2, problem="p2", speedup=3.0, bt="torch_compile"),
                   rec(3, problem="p3", correct=False)]).to_pandas()
    t = A.fast_p_summary(df, [1, 2])
    assert len(t) == 1 and t["n_attempts"].tolist() == [3] and t["n_accepted"].tolist() == [2]
    assert t["fast_1"].tolist() == [2 / 3] and t["fast_2"].tolist() == [1 / 3]
    assert t["baseline_types"].tolist() == ["pytorch_eager 1, torch_compile 1"]
