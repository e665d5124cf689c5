"""The importer of the published KernelBench-v3 sweep, on the shipped CSV and on broken copies."""
from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pyarrow as pa
import pytest

from kb_data.importer import (NVIDIA_CATEGORIES, UPSTREAM_CSV, UPSTREAM_SHA256, UpstreamImportError,
                              derived_baselines, import_upstream)
from kb_data.problems import level_of, split_problem_id
from kb_data.schema import SCHEMA_VERSION, UPSTREAM_RUN_COLUMNS, Baseline, RunRecord, to_table
from tests.runs_support import missing_nvidia_problems, stub_problems, upstream_records, upstream_rows  # noqa: F401

SHARED_CSV = Path(__file__).resolve().parents[2] / "shared" / "kernelbench_v3" / "results.csv"


# ---------------------------------------------------------------------------
# The shipped file

def test_shipped_csv_is_the_published_file():
    data = UPSTREAM_CSV.read_bytes()
    assert hashlib.sha256(data).hexdigest() == UPSTREAM_SHA256
    assert len(data) == 503_414
    if SHARED_CSV.exists():
        assert data == SHARED_CSV.read_bytes()
    readme = (UPSTREAM_CSV.parent / "README.md").read_text()
    for fact in (UPSTREAM_SHA256, "CC-BY-4.0", "Arledge", "Ouyang"):
        assert fact in readme


def test_counts(upstream_records, upstream_rows):
    assert len(upstream_records) == len(upstream_rows) == 2071
    assert len({r.model for r in upstream_records}) == 15
    assert {r.gpu for r in upstream_records} == {"RTX3090", "H100", "B200"}
    assert len({r.run_dir for r in upstream_records}) == 42


def test_kb_fields(upstream_records, upstream_rows):
    for rec, row in zip(upstream_records, upstream_rows):
        assert (rec.source, rec.suite, rec.schema_version) == ("upstream", "v3", SCHEMA_VERSION)
        assert rec.problem_sha256 is None and rec.flags is None and rec.created_at is None
        expected = "ok" if row["correct"] == "True" else ("incorrect" if row["compiled"] == "True" else "compile_error")
        assert rec.status == expected
        assert rec.accepted is rec.correct  # upstream's only verdict: acceptance is its correct, unchanged
        rec.validate()


def test_every_upstream_value_round_trips(upstream_records, upstream_rows):
    """Each CSV cell is reproduced from the record: repr() for floats, str() for the rest, empty <-> null."""
    n_floats = 0
    for rec, row in zip(upstream_records, upstream_rows):
        for col in UPSTREAM_RUN_COLUMNS:
            value, text = getattr(rec, col), row[col]
            if text == "":
                assert value is None, (col, row)
            elif isinstance(value, float):
                assert repr(value) == text, (col, text)
                n_floats += 1
            else:
                assert str(value) == text, (col, text)
    assert n_floats > 3000


def test_values_round_trip_through_arrow(upstream_records, upstream_rows):
    table = to_table(upstream_records)
    assert table.schema.equals(RunRecord.arrow_schema())
    for got, row in zip(table.select(list(UPSTREAM_RUN_COLUMNS)).to_pylist(), upstream_rows):
        for col, text in row.items():
            v = got[col]
            assert (v is None) if text == "" else ((repr(v) if isinstance(v, float) else str(v)) == text)


def test_baseline_type_kept_as_is(upstream_records):
    assert {r.baseline_type for r in upstream_records} == {None, "pytorch", "pytorch_eager", "torch_compile"}


def test_problems_matched_by_file_name(upstream_records):
    for rec in upstream_records:
        suite, category, name = split_problem_id(rec.problem_id)
        assert suite == "v3" and category in NVIDIA_CATEGORIES
        assert name + ".py" == rec.problem
        assert level_of(category) == rec.level
    assert len({r.problem_id for r in upstream_records}) == 60


def test_problems_matched_in_the_checkout():
    missing = missing_nvidia_problems()
    if missing:
        pytest.skip(f"problems/ of this checkout lacks {len(missing)} v3 NVIDIA problem(s): {', '.join(missing)}")
    records = import_upstream()
    assert len({r.problem_id for r in records}) == 60


def test_record_ids_stable_and_keyed(upstream_records, stub_problems):
    again = import_upstream(problems=stub_problems)
    assert [r.record_id for r in again] == [r.record_id for r in upstream_records]
    assert len({r.record_id for r in upstream_records}) == len(upstream_records)
    # The key is unique in the published file, so every id is the plain key hash.
    for r in upstream_records[:50]:
        key = "\x1f".join(["upstream", r.run_dir, r.model, r.gpu, r.problem])
        assert r.record_id == hashlib.sha256(key.encode()).hexdigest()


# ---------------------------------------------------------------------------
# Bad input: one error naming the line and the column, nothing imported

def _broken_copy(tmp_path, edit) -> Path:
    lines = UPSTREAM_CSV.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = edit(lines)
    path = tmp_path / "results.csv"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _set_cell(line_no: int, column: str, value: str):
    """Edit one cell of a 1-based line (the file has no quoted commas in the columns edited here)."""
    def edit(lines):
        header = lines[0].rstrip("\r\n").split(",")
        cells = lines[line_no - 1].rstrip("\r\n").split(",")
        assert len(cells) == len(header)
        cells[header.index(column)] = value
        lines[line_no - 1] = ",".join(cells) + "\n"
        return lines
    return edit


@pytest.mark.parametrize("line_no,column,value,message", [
    (2000, "gpu", "A100X", "unknown GPU"),
    (1500, "speedup", "fast", "not a finite number"),
    (1501, "ref_ms", "nan", "not a finite number"),
    (1502, "speedup", "9" * 401, "not a finite number"),  # parses, to inf
    (700, "correct", "yes", "not a boolean"),
    (701, "compiled", "true", "not a boolean"),
    (1200, "level", "two", "not an integer"),
    (1201, "level", "7", "not 1-4"),
    (1300, "total_tokens", "1.5", "not an integer"),
    (1301, "level", "1" * 5000, "not an integer"),
    (1400, "baseline_type", "cudnn", "unknown baseline type"),
    (1800, "problem", "no_such_problem.py", "matches no problem"),
    (1801, "level", "3", "not level 3"),
    (1900, "model", "", "required"),
])
def test_bad_cell_names_line_and_column(tmp_path, stub_problems, line_no, column, value, message):
    path = _broken_copy(tmp_path, _set_cell(line_no, column, value))
    with pytest.raises(UpstreamImportError) as e:
        import_upstream(path, problems=stub_problems)
    msg = str(e.value)
    assert f"line {line_no}, column '{column}'" in msg and message in msg and str(path) in msg


def test_correct_but_not_compiled_is_refused(tmp_path, stub_problems, upstream_rows):
    line_no = next(i for i, r in enumerate(upstream_rows, 2) if r["correct"] == "True")
    path = _broken_copy(tmp_path, _set_cell(line_no, "compiled", "False"))
    with pytest.raises(UpstreamImportError, match=f"line {line_no}, column 'correct'"):
        import_upstream(path, problems=stub_problems)


def test_missing_column_is_named(tmp_path, stub_problems):
    def drop_speedup(lines):
        out = []
        for line in lines:
            cells = line.rstrip("\n").split(",")
            del cells[6]  # speedup
            out.append(",".join(cells) + "\n")
        return out

    path = _broken_copy(tmp_path, drop_speedup)
    with pytest.raises(UpstreamImportError, match=r"line 1, column 'speedup': missing column speedup"):
        import_upstream(path, problems=stub_problems)


def test_unknown_column_and_ragged_row(tmp_path, stub_problems):
    path = _broken_copy(tmp_path, lambda ls: [line.rstrip("\n") + (",extra\n" if i == 0 else ",x\n") for i, line in enumerate(ls)])
    with pytest.raises(UpstreamImportError, match=r"line 1, column 'extra': unknown column"):
        import_upstream(path, problems=stub_problems)
    path = _broken_copy(tmp_path, lambda ls: ls[:9] + [ls[9].rstrip("\n") + ",x\n"] + ls[10:])
    with pytest.raises(UpstreamImportError, match=r"line 10: 19 fields, the header has 18"):
        import_upstream(path, problems=stub_problems)


def test_exact_duplicate_row_is_refused(tmp_path, stub_problems):
    path = _broken_copy(tmp_path, lambda ls: ls + [ls[5]])
    with pytest.raises(UpstreamImportError, match=r"line 2073: the row repeats line 6 exactly"):
        import_upstream(path, problems=stub_problems)


def test_repeated_key_gets_a_content_hash(tmp_path, stub_problems, upstream_records):
    """Two rows with the same (run_dir, model, gpu, problem) but different content: both kept, ids differ,
    and only those two ids change."""
    def repeat_with_other_tokens(lines):
        cells = lines[5].rstrip("\n").split(",")
        cells[10] = str(int(cells[10]) + 1)  # total_tokens
        return lines + [",".join(cells) + "\n"]

    records = import_upstream(_broken_copy(tmp_path, repeat_with_other_tokens), problems=stub_problems)
    assert len({r.record_id for r in records}) == 2072
    old = [r.record_id for r in upstream_records]
    new = [r.record_id for r in records]
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [4]


def test_changed_shipped_file_is_refused(tmp_path, stub_problems):
    path = _broken_copy(tmp_path, _set_cell(3, "turns", "11"))
    with pytest.raises(UpstreamImportError, match="sha256"):
        import_upstream(path, problems=stub_problems, expected_sha256=UPSTREAM_SHA256)


def test_not_utf8_names_the_line(tmp_path, stub_problems):
    path = tmp_path / "results.csv"
    path.write_bytes(UPSTREAM_CSV.read_bytes().replace(b"Kimi K2.5", b"Kimi K\xff2.5", 1))
    with pytest.raises(UpstreamImportError, match=r"line \d+: not UTF-8"):
        import_upstream(path, problems=stub_problems)


def test_cli_writes_nothing_on_bad_input(tmp_path, stub_problems, capsys):
    from kb_data.cli import main

    bad = _broken_copy(tmp_path, _set_cell(2071, "speedup", "1.2.3"))
    out = tmp_path / "runs.parquet"
    assert main(["import-upstream", "--csv", str(bad), "--out", str(out), "--problems", str(stub_problems)]) == 2
    assert "line 2071, column 'speedup'" in capsys.readouterr().err
    assert not out.exists()


# ---------------------------------------------------------------------------
# Derived baselines

def _percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), written out."""
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def test_derived_baselines(upstream_records, upstream_rows):
    expected: dict[tuple, list[float]] = {}
    for row in upstream_rows:
        if row["correct"] == "True":
            expected.setdefault((row["problem"], row["gpu"], row["baseline_type"]), []).append(float(row["ref_ms"]))
    rows = derived_baselines(upstream_records)
    assert len(rows) == len(expected)
    for b in rows:
        ms = expected[(b.problem, b.gpu, b.baseline_type)]
        assert b.source == "derived" and b.suite == "v3" and b.n_records == len(ms)
        assert b.baseline_ms == pytest.approx(_percentile(ms, 50), rel=1e-12)
        assert b.p10_ms == pytest.approx(_percentile(ms, 10), rel=1e-12)
        assert b.p90_ms == pytest.approx(_percentile(ms, 90), rel=1e-12)
        eager = b.baseline_type != "torch_compile"
        assert (b.eager_ms, b.compile_ms) == ((b.baseline_ms, None) if eager else (None, b.baseline_ms))
        assert b.problem_id.endswith("/" + b.problem[:-3])
        b.validate()
    assert {b.gpu for b in rows} == {"RTX3090", "H100", "B200"}
    assert to_table(rows, Baseline).num_rows == len(rows)
    assert isinstance(to_table(rows, Baseline), pa.Table)


def test_derived_baselines_are_medians_of_an_even_count():
    recs = [RunRecord(record_id=str(i), model="m", gpu="H100", level=1, problem="p.py", problem_id="v3/level1/p",
                      compiled=True, correct=ok, ref_ms=ms, baseline_type="torch_compile", source="upstream")
            for i, (ok, ms) in enumerate([(True, 1.0), (True, 4.0), (True, 2.0), (True, 3.0), (False, None)])]
    (b,) = derived_baselines(recs)
    assert (b.baseline_ms, b.n_records) == (2.5, 4)
    assert b.p10_ms == pytest.approx(1.3) and b.p90_ms == pytest.approx(3.7)
