"""Import the published KernelBench-v3 sweep (`results.csv`) as run records.

    records = import_upstream()              # the shipped, hash-checked copy
    baselines = derived_baselines(records)   # median ref_ms per (problem, GPU, baseline_type)

The CSV is parsed strictly, as text, and converted here: every upstream value is kept
unchanged in its upstream-named column (empty -> null), and the kb-data fields are filled
where the row determines them (`status`, `problem_id`, `record_id`, ...) and null otherwise.
Any bad cell refuses the whole file with one error naming the 1-based line and the column.
"""
from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from pathlib import Path

from .gpus import GPUS
from .problems import ProblemSet, level_of, split_problem_id
from .schema import BASELINE_TYPES, UPSTREAM_RUN_COLUMNS, Baseline, RunRecord, SchemaError

UPSTREAM_CSV = Path(__file__).resolve().parent / "data" / "kernelbench_v3_results.csv"
UPSTREAM_SHA256 = "89f654b11cdbc1b673d18f4f336a8b02657b0ecadcbf475a3df07f31f6aca08d"
# The NVIDIA categories of problems/v3 that the published sweep ran (metal_* ran on Apple GPUs, not in it).
NVIDIA_CATEGORIES = ("level1", "level2", "level3", "level4", "graphics", "tile_specialized", "cutile")

_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")  # no nan/inf/underscores/spaces
_BOOL = {"True": True, "False": False}


class UpstreamImportError(ValueError):
    """A CSV that cannot be imported; the message names the file, the line and the column."""


class _Cell(Exception):
    """Raised by a converter; the caller adds file, line and column."""


def _text(s: str):
    return s or None


def _int(s: str):
    if not s:
        return None
    if not _INT.fullmatch(s) or len(s) > 30:  # past 4300 digits int() itself refuses, with no line or column
        raise _Cell(f"{s[:40]!r} is not an integer")
    return int(s)


def _float(s: str):
    if not s:
        return None
    if not _FLOAT.fullmatch(s) or not math.isfinite(value := float(s)):  # 401 digits parse, to inf
        raise _Cell(f"{s[:40]!r} is not a finite number")
    return value


def _bool(s: str):
    if s not in _BOOL:
        raise _Cell(f"{s!r} is not a boolean (True or False)")
    return _BOOL[s]


def _required(s: str):
    if not s:
        raise _Cell("empty, but required")
    return s


def _gpu(s: str):
    if s not in GPUS:
        raise _Cell(f"unknown GPU {s!r}; known: {', '.join(GPUS)}")
    return s


def _baseline_type(s: str):
    if s and s not in BASELINE_TYPES:
        raise _Cell(f"unknown baseline type {s!r}; known: {', '.join(BASELINE_TYPES)}")
    return s or None


def _level(s: str):
    level = _int(_required(s))
    if not 1 <= level <= 4:
        raise _Cell(f"level {level} is not 1-4")
    return level


CONVERTERS = {
    "model": _required, "gpu": _gpu, "level": _level, "problem": _required,
    "compiled": _bool, "correct": _bool,
    "speedup": _float, "ref_ms": _float, "sol_ms": _float,
    "turns": _int, "total_tokens": _int, "estimated_cost_usd": _float,
    "op_type": _text, "baseline_type": _baseline_type, "precision_used": _text,
    "run_dir": _text, "solution_link": _text, "baseline_link": _text,
}
assert tuple(CONVERTERS) == UPSTREAM_RUN_COLUMNS


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def import_upstream(csv_path: str | Path | None = None, problems: ProblemSet | str | Path | None = None,
                    expected_sha256: str | None = None) -> list[RunRecord]:
    """Run records of the published sweep; the shipped copy by default (its sha256 is checked).

    `problems` is the problem set that names are matched against (default: the checkout's).
    Raises UpstreamImportError on the first bad cell; nothing is returned partially.
    """
    if csv_path is None:
        csv_path, expected_sha256 = UPSTREAM_CSV, expected_sha256 or UPSTREAM_SHA256
    path = Path(csv_path)
    data = path.read_bytes()
    if expected_sha256 and hashlib.sha256(data).hexdigest() != expected_sha256:
        raise UpstreamImportError(f"{path}: sha256 {hashlib.sha256(data).hexdigest()} is not the expected "
                                  f"{expected_sha256}; the file was changed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise UpstreamImportError(f"{path}: line {line}: not UTF-8: {e.reason}") from e
    if not isinstance(problems, ProblemSet):
        problems = ProblemSet(problems)
    return parse_rows(text, problems, where=str(path))


def parse_rows(text: str, problems: ProblemSet, where: str = "results.csv") -> list[RunRecord]:
    """Parse the CSV text into records, all or nothing."""
    by_file = _nvidia_problems(problems)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)

    def fail(line: int, column: str | None, msg: str):
        col = f", column {column!r}" if column else ""
        raise UpstreamImportError(f"{where}: line {line}{col}: {msg}") from None

    try:
        header = next(reader)
    except StopIteration:
        fail(1, None, "empty file: no header")
    except csv.Error as e:
        fail(1, None, f"malformed CSV: {e}")
    missing = [c for c in UPSTREAM_RUN_COLUMNS if c not in header]
    if missing:
        fail(1, missing[0], f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    unknown = [c for c in header if c not in CONVERTERS]
    if unknown:
        fail(1, unknown[0], f"unknown column (upstream's table has exactly: {', '.join(UPSTREAM_RUN_COLUMNS)})")
    if len(set(header)) != len(header):
        fail(1, next(c for c in header if header.count(c) > 1), "column appears twice")

    parsed = []  # (line, raw cells, converted row)
    line = 1
    while True:
        start = line + 1  # a quoted cell may span lines: name the line the row starts on
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            fail(start, None, f"malformed CSV: {e}")
        line = reader.line_num
        if len(cells) != len(header):
            fail(start, None, f"{len(cells)} fields, the header has {len(header)}")
        raw = dict(zip(header, cells))
        row = {}
        for col in UPSTREAM_RUN_COLUMNS:
            try:
                row[col] = CONVERTERS[col](raw[col])
            except _Cell as e:
                fail(start, col, str(e))
        if row["correct"] and not row["compiled"]:
            fail(start, "correct", "True while 'compiled' is False")
        row["problem_id"], column, error = _match(row["problem"], row["level"], by_file)
        if error:
            fail(start, column, error)
        parsed.append((start, raw, row))
    if not parsed:
        fail(2, None, "no data rows")

    ids = _record_ids([(line, [raw[c] for c in UPSTREAM_RUN_COLUMNS]) for line, raw, _ in parsed], where)
    records = []
    for (start, _, row), rid in zip(parsed, ids):
        row.update(record_id=rid, source="upstream", suite="v3", status=_status(row))
        try:
            records.append(RunRecord.from_row(row, where=f"{where}: line {start}: "))
        except SchemaError as e:  # the converters above should make this unreachable
            raise UpstreamImportError(str(e)) from e
    return records


def _status(row: dict) -> str:
    if row["correct"]:
        return "ok"
    return "incorrect" if row["compiled"] else "compile_error"


def _nvidia_problems(problems: ProblemSet) -> dict[str, list[str]]:
    by_file: dict[str, list[str]] = {}
    for pid in problems.ids("v3"):
        _, category, name = split_problem_id(pid)
        if category in NVIDIA_CATEGORIES:
            by_file.setdefault(name + ".py", []).append(pid)
    return by_file


def _match(file: str, level: int, by_file: dict[str, list[str]]) -> tuple[str, str, str]:
    """(problem_id, "", "") or ("", the column to name, the error)."""
    pids = by_file.get(file, [])
    if not pids:
        return "", "problem", (f"{file!r} matches no problem in the NVIDIA categories of problems/v3 "
                               f"({', '.join(NVIDIA_CATEGORIES)})")
    at_level = [p for p in pids if level_of(split_problem_id(p)[1]) == level]
    if len(at_level) > 1:
        return "", "problem", f"{file!r} at level {level} is ambiguous: {', '.join(at_level)}"
    if not at_level:
        return "", "level", f"{level}, but {file!r} is {', '.join(pids)}, not level {level}"
    return at_level[0], "", ""


def _sha(parts) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _record_ids(rows: list[tuple[int, list[str]]], where: str) -> list[str]:
    """sha256 over source, run_dir, model, gpu and problem; the row's content is added only
    where that key repeats, so ids stay short-keyed and identical across imports."""
    idx = {c: i for i, c in enumerate(UPSTREAM_RUN_COLUMNS)}
    keys = [["upstream"] + [cells[idx[c]] for c in ("run_dir", "model", "gpu", "problem")] for _, cells in rows]
    ids = [_sha(k) for k in keys]
    seen: dict[str, int] = {}
    for rid in ids:
        seen[rid] = seen.get(rid, 0) + 1
    out, first_line = [], {}
    for (line, cells), key, rid in zip(rows, keys, ids):
        if seen[rid] > 1:
            rid = _sha(key + ["row"] + cells)
            if rid in first_line:
                raise UpstreamImportError(f"{where}: line {line}: the row repeats line {first_line[rid]} exactly")
            first_line[rid] = line
        out.append(rid)
    return out


def derived_baselines(records) -> list[Baseline]:
    """One Baseline per (problem, GPU, baseline_type) of the sweep: the median ref_ms over its correct records.

    p10/p90 are the spread of those ref_ms values across runs (not across timing trials), and
    `n_records` says how many there are. `eager_ms` / `compile_ms` repeat the median where the
    baseline type says which one it is ("pytorch" is upstream's older eager-only baseline).
    """
    import numpy as np

    groups: dict[tuple, list] = {}
    for r in records:
        if r.correct and r.ref_ms is not None and r.baseline_type and r.problem_id:
            groups.setdefault((r.problem_id, r.gpu, r.baseline_type), []).append(r)
    out = []
    for (pid, gpu, btype), recs in sorted(groups.items()):
        ms = np.array([r.ref_ms for r in recs], dtype=float)
        median = float(np.median(ms))
        out.append(Baseline(
            problem_id=pid, suite=split_problem_id(pid)[0], gpu=gpu, baseline_ms=median, baseline_type=btype,
            eager_ms=median if btype in ("pytorch", "pytorch_eager") else None,
            compile_ms=median if btype == "torch_compile" else None,
            p10_ms=float(np.percentile(ms, 10)), p90_ms=float(np.percentile(ms, 90)), n_records=len(recs),
            level=recs[0].level, problem=recs[0].problem, source="derived",
        ))
    return out
