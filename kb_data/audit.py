"""`kb audit`: re-grade the solutions of a published runs dataset on this machine and say what changed.

    src = open_source("Infatoshi/kernelbench-v3-runs", revision="<tag or SHA>")  # or a folder, or a store name
    res = audit(src, "audit-out", options=Options(device="cuda:0"), filters=Filters(gpu=["H100"], latest=True))
    res.records        # one RunRecord per audited record, source="audit"
    res.skipped        # records that could not be graded, with the reason (no solution file, ...)

The steps, each a small function: read the source's records (our run records, or upstream's table,
whose problem file names are mapped to problem ids by the importer) -> select (filters) -> find each
record's solution code (its `solution_code`, else the file its `solution_link` names under
`solutions/`) -> a manifest with one job per distinct (problem, code): the sweep's solutions/ holds
the same file under several model names, and a solution is graded once -> `run_batch` (resumable:
what is in out/graded/records.jsonl is not graded again) -> each source record joined with its
graded record by (problem_id, solution_sha256, model) -> an audit record.

An audit record is a run record graded here (gpu, status, flags, errors, timings: this machine's)
with two verdicts: `correct`, the suite's published rules (numeric correctness under the suite's
tolerance on its published seeds: what the original grader would say on this machine), and
`accepted`, ours (every check: status ok). `failure_cause` says whether a failure is the machine's
toolchain or the solution; `audit_of`, `audit_dataset`, `audit_revision` and `audit_published_accepted`
link it to the audited record and its published verdict.

Layering: above the harness, the stores and the analysis (it calls them); below the CLI.
"""
from __future__ import annotations

import ast
import csv
import hashlib
import importlib
import importlib.util
import io
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .folders import dataset_files, within
from .io import source_sha256, storable, write_bytes_atomic
from .schema import UPSTREAM_RUN_COLUMNS, RunRecord, SchemaError

DATA_SUFFIXES = (".parquet", ".jsonl", ".csv")
SOLUTIONS_DIR = "solutions"
SOURCE_MAX_BYTES = 8 << 30  # what an audit fetches of a Hub dataset: its data files, solutions/ and card


class AuditError(ValueError):
    """A source that cannot be audited; the message names the dataset and what is wrong."""


# ---------------------------------------------------------------------------
# The source: a runs dataset at an immutable revision, materialised as a folder

@dataclass
class Source:
    dataset: str          # Hub repo id, local:<store name>, or the folder path as given
    revision: str         # commit SHA (Hub, store) or a content hash of the folder
    folder: Path          # the dataset's files: data files and, for upstream's layout, solutions/
    root: Path | None = None  # where its files may lie (links resolved): the folder, or a Hub cache's repo folder

    @property
    def label(self) -> str:
        return f"{self.dataset}@{self.revision[:12]}"


def open_source(source: str, revision: str | None = None, store: str = "auto", org: str | None = None,
                store_root: str | Path | None = None) -> Source:
    """Resolve SOURCE: an existing folder, a local store dataset (a name without '/'), or a Hub repo id."""
    from .stores import open_store

    path = Path(source)
    if store == "auto":
        store = "folder" if path.is_dir() else "hub" if "/" in source else "local"
    if store == "folder":
        if not path.is_dir():
            raise AuditError(f"{source}: no such dataset folder")
        if revision:
            raise AuditError(f"{source}: a folder has no revisions; --revision is for a store or the Hub")
        return Source(str(path), folder_revision(path), path)
    if store == "local":
        from .builders.common import dataset_name

        st = open_store("local", root=store_root)
        name = dataset_name(source)
    elif store == "hub":
        st = open_store("hub", org=org)
        name = source
    else:
        raise AuditError(f"unknown store {store!r}; one of auto, folder, local, hub")
    sha = st.resolve(name, revision or "main")  # a tag or branch is pinned to its commit here, once
    # not the store's path, nor a bare name: the label travels with the records
    label = f"local:{name}" if store == "local" else st.repo_id(name)
    snap = Path(st.snapshot(name, sha, patterns=[f"*{x}" for x in DATA_SUFFIXES] + [f"{SOLUTIONS_DIR}/*", "README.md"],
                            max_bytes=SOURCE_MAX_BYTES))
    # huggingface_hub's snapshot links each file to the repo's blobs/, two folders up
    return Source(label, sha, snap, snap.parent.parent if store == "hub" else snap)


def folder_revision(folder: Path) -> str:
    """A content hash of every file under the folder (names and bytes): the folder's immutable id."""
    h = hashlib.sha256()
    for p in dataset_files(folder, root=folder):
        h.update(p.relative_to(folder).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return "folder-" + h.hexdigest()[:16]


def data_files(folder: Path, root: Path | None = None) -> list[Path]:
    """Data files of a dataset folder: Parquet, JSONL or CSV anywhere but solutions/ and hidden folders."""
    return [p for p in dataset_files(folder, DATA_SUFFIXES, root or folder)
            if p.relative_to(folder).parts[0] != SOLUTIONS_DIR]


def read_source_records(src: Source, problems_root=None) -> list[RunRecord]:
    """Every record of the source as a RunRecord (upstream rows through the importer: ids and problem ids as ours)."""
    files = data_files(src.folder, src.root)
    if not files:
        raise AuditError(f"{src.label}: no .parquet, .jsonl or .csv data files")
    records: list[RunRecord] = []
    for f in files:
        rows = _read_rows(f)
        ours = [r for r in rows if r.get("record_id")]
        if ours and len(ours) != len(rows):
            raise AuditError(f"{f}: some rows have a record_id and some do not; one format per file")
        if ours:
            records += [_our_record(r, f"{f.name}: row {i}: ") for i, r in enumerate(rows)]
        elif rows:
            records += _upstream_records(rows, problems_root, where=f"{src.label}/{f.relative_to(src.folder)}")
    seen: dict[str, RunRecord] = {}
    for r in records:  # every grade is joined back to its record by id: a shared one would mix two records up
        if r.record_id in seen and seen[r.record_id].to_row() != r.to_row():
            raise AuditError(f"{src.label}: two different records share record_id {r.record_id!r} "
                             f"({seen[r.record_id].model}, {seen[r.record_id].gpu} and {r.model}, {r.gpu}); "
                             "a runs dataset's record ids are unique")
        seen.setdefault(r.record_id, r)
    return list(seen.values())


def _read_rows(path: Path) -> list[dict]:
    """The rows of a data file, or an AuditError naming the file and what is wrong with it (the file is someone
    else's: anything may be in it)."""
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
        elif path.suffix == ".jsonl":
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        else:
            rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    except (ValueError, RecursionError, csv.Error, OSError) as e:  # JSON, UTF-8 and Arrow errors are ValueErrors
        raise AuditError(f"{path}: not a readable {path.suffix[1:]} table ({type(e).__name__}: {str(e)[:200]})") from None
    if not all(isinstance(r, dict) for r in rows):
        raise AuditError(f"{path}: every row must be an object of fields")
    return rows


def _our_record(row: dict, where: str) -> RunRecord:
    # columns of a newer schema than ours are not needed to re-grade a record: left out, not refused;
    # rows of an older one get the fields they lack derived (accepted) or null
    known = {f.name for f in RunRecord.fields()}
    return RunRecord.from_row({k: v for k, v in row.items() if k in known}, where=where)


def _upstream_records(rows: list[dict], problems_root, where: str) -> list[RunRecord]:
    """Upstream's table (any file format) through the importer's strict parser, as the CSV it publishes."""
    from .importer import UpstreamImportError, parse_rows
    from .problems import ProblemSet

    missing = [c for c in UPSTREAM_RUN_COLUMNS if c not in rows[0]]
    if missing:
        raise AuditError(f"{where}: neither our run records (no record_id) nor upstream's table (missing {', '.join(missing)})")
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(UPSTREAM_RUN_COLUMNS)  # extra columns (e.g. a solution_code) are not upstream's: left out
    for r in rows:
        w.writerow([_cell(r.get(c)) for c in UPSTREAM_RUN_COLUMNS])
    try:
        return parse_rows(buf.getvalue(), ProblemSet(problems_root), where=where)
    except UpstreamImportError as e:
        raise AuditError(str(e)) from None


def _cell(v) -> str:
    """A value as upstream's CSV writes it: empty for null, True/False, repr for floats."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v)
    return str(v)


# ---------------------------------------------------------------------------
# Selecting, and finding each record's solution

@dataclass
class Filters:
    model: list[str] = field(default_factory=list)
    gpu: list[str] = field(default_factory=list)     # the GPU the record was published for
    problem: list[str] = field(default_factory=list)  # problem id, name or file name
    latest: bool = False                              # the latest record per (model, gpu, problem)


def select(records: list[RunRecord], filters: Filters) -> list[RunRecord]:
    def problem_match(r: RunRecord) -> bool:
        names = {r.problem_id, r.problem, (r.problem or "").removesuffix(".py"), (r.problem_id or "").split("/")[-1]}
        return any(p in names for p in filters.problem)

    out = [r for r in records if (not filters.model or r.model in filters.model)
           and (not filters.gpu or r.gpu in filters.gpu) and (not filters.problem or problem_match(r))]
    if filters.latest and out:
        from . import analysis as A
        from .schema import to_table

        # the analysis's own frame: times parsed, so that "latest" is the leaderboard's latest (compared as written, a
        # time with another offset won: red team, session 51)
        keep = set(A.dedup(A.frame(to_table(out, RunRecord)), "latest")["record_id"])
        out = [r for r in out if r.record_id in keep]
    return out


def solution_code(rec: RunRecord, folder: Path, root: Path | None = None) -> tuple[str | None, str]:
    """(code, where it came from) or (None, why not): the record's own code, else its solutions/ file."""
    if rec.solution_code:
        return rec.solution_code, "solution_code"
    names = []
    if rec.solution_link:
        names.append(rec.solution_link.replace("\\", "/").rsplit("/", 1)[-1])
    if rec.model and rec.gpu and rec.problem:
        names.append(f"{rec.model}_{rec.gpu}_{rec.problem}.txt")  # the sweep's naming, for a record without a link
    for name in dict.fromkeys(names):
        path = folder / SOLUTIONS_DIR / name
        if name and within(path, root or folder):
            return path.read_text(encoding="utf-8", errors="replace"), f"{SOLUTIONS_DIR}/{name}"
    if not names:
        return None, "no solution_code, no solution_link"
    return None, f"no file {SOLUTIONS_DIR}/{names[0]} in the dataset"


# ---------------------------------------------------------------------------
# Grading: a manifest for the batch machinery, then the join

@dataclass
class Job:
    problem_id: str
    sha: str
    model: str            # the model the graded record carries (the first of the records sharing the code)
    path: Path


def write_manifest(items: list[tuple[RunRecord, str]], out: Path, graded: dict[tuple[str, str], str] | None = None
                   ) -> tuple[Path, dict[tuple[str, str], Job], list[tuple[str, str]]]:
    """One job per distinct (problem_id, code): the code is stored content-addressed under out/solutions/. Also
    each item's job key, (problem_id, sha), in the order of `items`.

    `graded` maps (problem_id, sha) to the model of a record already graded in out/graded: that job keeps
    its model, so a rerun with other filters finds the grade instead of grading the code again.
    """
    graded = graded or {}
    keys = [(rec.problem_id, graded_sha(code, out)) for rec, code in items]
    jobs: dict[tuple[str, str], Job] = {}
    for i in sorted(range(len(items)), key=lambda i: (items[i][0].problem_id, items[i][0].model or "",
                                                      items[i][0].record_id)):
        (rec, code), key = items[i], keys[i]
        if key not in jobs:
            jobs[key] = Job(key[0], key[1], graded.get(key, rec.model or "unknown"), solution_file(code, out))
    lines = [json.dumps({"problem": j.problem_id, "submission": str(j.path.resolve()), "model": j.model}, sort_keys=True)
             for j in jobs.values()]
    manifest = out / "manifest.jsonl"
    write_bytes_atomic(manifest, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"))
    return manifest, jobs, keys


def solution_file(code: str, out: Path) -> Path:
    """The code's file under out/solutions/, named by its hash (written once)."""
    path = out / SOLUTIONS_DIR / f"{source_sha256(storable(code))}.py"
    if not path.exists():
        write_bytes_atomic(path, storable(code).encode("utf-8"))
    return path


def graded_sha(code: str, out: Path) -> str:
    """The solution_sha256 the batch gives the code: of its file as the batch reads it (a CRLF source is graded with
    LF line ends, and was not found under its own hash: red team, session 51)."""
    from .harness.batch import read_submission

    return source_sha256(read_submission(solution_file(code, out)))


def graded_models(graded_dir: Path) -> dict[tuple[str, str], str]:
    """(problem_id, solution_sha256) -> model of the records already in graded_dir/records.jsonl."""
    from .harness.batch import RecordSink

    if not (graded_dir / "records.jsonl").exists():
        return {}
    return {(r.problem_id, r.solution_sha256): r.model for r in RecordSink(graded_dir).records()}


@dataclass
class AuditResult:
    source: Source
    records: list[RunRecord]               # one audit record per audited source record
    audited: list[RunRecord]               # the source records they audit, same order
    skipped: list[tuple[RunRecord, str]]   # source records not graded, and why
    out: Path


def audit(src: Source, out: str | Path, *, filters: Filters | None = None, options=None, workers="auto",
          problems_root=None, progress: bool = True, baselines=None) -> AuditResult:
    """Grade the selected records' solutions (resumable) and join the grades back; writes out/audit.parquet."""
    from .harness.batch import record_key, run_batch
    from .problems import ProblemSet

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = select(read_source_records(src, problems_root), filters or Filters())
    ps, problems = ProblemSet(problems_root), {}
    items, skipped = [], []
    for rec in records:
        code, where = solution_code(rec, src.folder, src.root)
        if code is None:
            skipped.append((rec, where))
        elif not rec.problem_id:
            skipped.append((rec, "no problem_id"))
        elif isinstance(problem := _problem(ps, rec.problem_id, problems), str):
            skipped.append((rec, problem))
        else:  # the batch is told the problem's own id: the join below finds its record under it
            items.append((rec, replace(rec, problem_id=problem.problem_id), code))
    manifest, jobs, keys = write_manifest([(canonical, code) for _, canonical, code in items], out,
                                          graded_models(out / "graded"))
    graded: dict[str, RunRecord] = {}
    if jobs:
        sink = run_batch(manifest, out / "graded", problems_root=problems_root, options=options, workers=workers,
                         progress=progress, baselines=baselines)
        graded = {record_key(r.problem_id, r.problem_sha256, r.solution_sha256, r.model): r for r in sink.records()}
    audit_records, audited = [], []
    for (rec, _, _), key in zip(items, keys):
        job = jobs[key]
        # by the problem's content too: a resumed folder may hold a grade made against other problem files
        g = graded.get(record_key(job.problem_id, problems[rec.problem_id].sha256, job.sha, job.model))
        if g is None:
            skipped.append((rec, "not graded: the batch ended without its record (interrupted, or the harness failed "
                                 "on it: see its output)"))
            continue
        audit_records.append(audit_record(rec, g, src))
        audited.append(rec)
    _write_records(audit_records, out / "audit.parquet")
    _write_records(audited, out / "audited.parquet")
    return AuditResult(src, audit_records, audited, skipped, out)


def _problem(ps, problem_id: str, seen: dict):
    """The problem a record names, loaded once per spelling, or why it cannot be graded (a string)."""
    from .problems import ProblemError

    if problem_id not in seen:
        try:
            seen[problem_id] = ps.load(problem_id)
        except (ProblemError, OSError) as e:
            seen[problem_id] = f"not graded: {e}"
    return seen[problem_id]


def _write_records(records: list[RunRecord], path: Path) -> None:
    import pyarrow.parquet as pq

    from .io import atomic_target
    from .schema import to_table

    with atomic_target(path) as tmp:
        pq.write_table(to_table(records, RunRecord), tmp)


# ---------------------------------------------------------------------------
# One audit record

def passes_published_rules(g: RunRecord) -> bool | None:
    """Would the suite's own grader pass it here? Numeric correctness on the published seeds.

    True when the outputs matched: status ok, `correct` (a harness that keeps correct=True on a record
    rejected by a flag), a record rejected by an anti-cheat flag after its outputs matched ("anti-cheat:
    ..."), or one wrong only on our extra secret seed. None where the record does not say (a rejection
    before the outputs were compared, e.g. a lazy tensor). False for every other failure.
    """
    if g.status == "ok" or g.correct:
        return True
    if g.status == "rejected":
        error = g.error or ""
        if error.startswith("anti-cheat:") or error.startswith("wrong on a secret seed only"):
            return True
        return None
    return False


# A failure is the machine's only where this machine's own facts bear out what its error says: the error is text the
# solution writes (an ImportError raised by hand was filed as "a package this machine lacks": red team, session 51).
MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
MISSING_NAME = re.compile(r"cannot import name '(\w+)' from '((?:torch|triton)[\w.]*)'")
MISSING_ATTRIBUTE = re.compile(r"module '((?:torch|triton)[\w.]*)' has no attribute '(\w+)'")
NO_GPU = re.compile(r"Torch not compiled with CUDA|no CUDA GPUs|Found no NVIDIA driver|CUDA_HOME|CUDA is not available|"
                    r"requires a GPU|0 active drivers")
# a build stage's compiler failure is the machine's only where the published run built the same code
COMPILER_ERRORS = re.compile(r"Error building extension|nvcc|ninja|CompilationError|error: |ptxas")


def failure_cause(g: RunRecord, published: RunRecord) -> str | None:
    """environment | solution for a record that is not accepted; None for an accepted one."""
    if g.status == "ok":
        return None
    error = g.error or ""
    if g.status in ("compile_error", "runtime_error") and _machine_lacks(error, g.solution_code or "", g.gpu):
        return "environment"
    if g.status == "compile_error" and error.startswith("build: ") and published.compiled and COMPILER_ERRORS.search(error):
        return "environment"
    return "solution"


def _machine_lacks(error: str, code: str, gpu: str | None) -> bool:
    """Does this machine lack what the error says the solution needs, and does the solution's code ask for it?"""
    if NO_GPU.search(error):
        return gpu == "CPU"  # graded on a GPU, a solution that says it found none is wrong about it
    if m := MISSING_MODULE.search(error):
        top = m.group(1).split(".")[0]
        return top in _imported_modules(code) and importlib.util.find_spec(top) is None  # finds, never runs, it
    if m := MISSING_NAME.search(error):
        module, name = m.group(2), m.group(1)
    elif m := MISSING_ATTRIBUTE.search(error):
        module, name = m.group(1), m.group(2)
    else:
        return False
    if not re.search(rf"\b{name}\b", code):
        return False
    try:
        return not hasattr(importlib.import_module(module), name)  # torch's or triton's own modules only
    except ImportError:
        return False


def _imported_modules(code: str) -> set[str]:
    """The top-level names of the modules a source imports by statement."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def audit_record(published: RunRecord, g: RunRecord, src: Source) -> RunRecord:
    """The graded record as an audit of `published`: this machine's grade, the published record's identity."""
    row = g.to_row()
    for k in ("turns", "total_tokens", "estimated_cost_usd", "run_dir", "baseline_link"):
        row[k] = None  # facts of the agent's run, not of this grade: kept on the audited record only
    row.update(
        record_id=hashlib.sha256(f"audit|{published.record_id}|{g.record_id}".encode()).hexdigest()[:32],
        source="audit", model=published.model, solution_link=published.solution_link,
        correct=passes_published_rules(g), failure_cause=failure_cause(g, published),
        audit_of=published.record_id, audit_dataset=src.dataset, audit_revision=src.revision,
        audit_published_accepted=published.derived_accepted(),
    )
    try:
        return RunRecord.from_row(row, where=f"audit of {published.record_id}: ")
    except SchemaError as e:  # the graded record was valid, so only this module's fields can be wrong
        raise AuditError(str(e)) from e
