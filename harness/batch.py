"""Grade many submissions: one worker per GPU (or Ray tasks), records written as they finish, resumable.

A batch is a folder (`<problem>.py` files, or `<problem>/solution.py`) or a manifest
(JSONL rows `{"problem": ..., "submission": ..., "model": ...}`). Records are appended to
`<out>/records.jsonl` one line at a time (flushed and fsynced), so an interrupted batch
resumes where it stopped: a (problem, solution hash, model) already in the file is skipped.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from kb_data.gpus import gpu_key
from kb_data.io import RECORDS_DIR_MODE, open_lock_file, source_sha256, write_bytes_atomic
from kb_data.problems import ProblemError, ProblemSet
from kb_data.schema import RunRecord, to_table
from kb_data.harness.baselines import BaselineIndex
from kb_data.harness import build
from kb_data.harness.build import ensure_built
from kb_data.harness.grade import (CHECKS_OFF, JUDGE_GRACE_S, Options, build_job_for, grade, memory_limit,
                                   verdict_options)
from kb_data.harness.sandbox import resolve_level
from kb_data.harness.worker import cuda_devices, map_per_device


@dataclass(frozen=True)
class BatchJob:
    problem: str          # id, name or file name
    submission: str       # path of the submission file
    model: str | None = None


def discover(batch: str | Path) -> list[BatchJob]:
    batch = Path(batch)
    if batch.is_file():
        jobs = []
        for n, line in enumerate(batch.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                sub = Path(row["submission"])
                jobs.append(BatchJob(row["problem"], str(sub if sub.is_absolute() else batch.parent / sub), row.get("model")))
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{batch}:{n}: a manifest row needs 'problem' and 'submission' ({e})") from None
        return jobs
    if not batch.is_dir():
        raise FileNotFoundError(f"{batch}: no such batch folder or manifest")
    jobs = [BatchJob(p.stem, str(p)) for p in sorted(batch.glob("*.py"))]
    jobs += [BatchJob(p.parent.name, str(p)) for p in sorted(batch.glob("*/solution.py"))]
    return jobs


def visible_devices(workers: str | int | None) -> list[str]:
    n_gpu = len(cuda_devices())
    if workers in (None, "auto"):
        return [f"cuda:{i}" for i in range(n_gpu)] or ["cpu"]
    n = int(workers)
    if n_gpu:
        return [f"cuda:{i % n_gpu}" for i in range(n)]
    return ["cpu"] * n


def grading_of(options: Options, devices: list[str]) -> dict:
    """What decides a folder's records besides their sources and problems: the verdict options and the hardware the
    devices are (GPU keys, "CPU"), which a record names in `gpu`."""
    names = {d: (cuda_devices()[int(d.split(":")[1])]["name"] if d.startswith("cuda:") else None) for d in devices}
    kinds = sorted({options.gpu or (gpu_key(n) if n else "CPU") for n in names.values()})
    return {**verdict_options(options), "hardware": kinds}


def _graded_otherwise(row: dict, grading: dict) -> str | None:
    """Why a stored record is not one of `grading`'s (its hardware, the checks its options left out), or None."""
    if "hardware" in grading and row.get("gpu") is not None and row["gpu"] not in grading["hardware"]:  # None: it
        # never reached a device (a compile error), which holds anywhere
        return f"on {row.get('gpu')}, this grading on {', '.join(grading['hardware'])}"
    try:
        off = " ".join(json.loads(row.get("flag_details") or "{}").get("checks_off") or [])
    except (ValueError, AttributeError):
        return "its flag_details are not readable"
    for option, (said, _) in CHECKS_OFF.items():
        if (said in off) == bool(grading.get(option, True)):
            return said if said in off else f"{option} off here, on there"
    return None


def record_key(problem_id: str, problem_sha: str | None, sol_sha: str, model: str | None) -> str:
    """What a records folder knows a grading by: the problem's content too (a problem file edited in place, or
    another revision of it, keeps its id: red team, session 41)."""
    return f"{problem_id}|{problem_sha or ''}|{sol_sha}|{model or ''}"


class OutputBusy(RuntimeError):
    """Another batch holds the output folder, or it holds records graded with other options."""


class RecordSink:
    """Append-only JSONL of records; the set of finished keys makes a batch resumable. Only the grading parent
    writes it, and it holds an exclusive lock on the folder while it does (a second batch gets a clear error)."""

    def __init__(self, out_dir: Path, grading: dict | None = None):
        """`grading`: what decides its records besides their sources and problems (grading_of: the verdict options
        and the hardware), which a folder keeps in grading.json and every stored row must agree with: records made
        otherwise are never served to a batch that resumes in it (None: read only)."""
        self.dir = Path(out_dir)
        self.dir.mkdir(mode=RECORDS_DIR_MODE, parents=True, exist_ok=True)
        self._lock = open_lock_file(self.dir / ".lock")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise OutputBusy(f"{self.dir} is being written by another batch (its .lock is held); wait for it or "
                             "choose another --out") from None
        self.path = self.dir / "records.jsonl"
        if grading is not None:
            try:
                self._same_grading(grading)
            except BaseException:
                self._lock.close()
                raise
        self.baselines_path = self.dir / "baselines.jsonl"
        self.lock = threading.Lock()
        self.done: set[str] = set()
        self.harness_failures: list[str] = []  # jobs the harness itself failed on: no record, graded again on resume
        for path in (self.path, self.baselines_path):
            _end_torn_line(path)
        for r in _rows(self.path):  # a line cut by a crash mid-write is skipped: its job runs again
            self.done.add(record_key(r["problem_id"], r.get("problem_sha256"), r["solution_sha256"], r.get("model")))

    def _same_grading(self, grading: dict) -> None:
        kept = self.dir / "grading.json"
        if kept.exists():
            try:
                before = json.loads(kept.read_text(encoding="utf-8"))
            except ValueError:
                before = None
        else:
            before = None if self.path.exists() and self.path.stat().st_size else grading
        if before != grading:
            if before is None:
                what = "options not recorded (no readable grading.json)"
            else:
                differ = sorted(k for k in set(grading) | set(before) if before.get(k) != grading.get(k))
                what = (f"{', '.join(differ)}: { {k: before.get(k) for k in differ} } there, "
                        f"{ {k: grading.get(k) for k in differ} } now")
            raise OutputBusy(f"{self.dir} holds records graded with other options ({what}); resuming there would serve "
                             "them as this grading's: choose another --out")
        if not kept.exists():
            write_bytes_atomic(kept, (json.dumps(grading, sort_keys=True, indent=1) + "\n").encode())
        for n, row in enumerate(_rows(self.path)):  # rows appended by other means (kb eval --out) say how they were made
            why = _graded_otherwise(row, grading)
            if why:
                raise OutputBusy(f"{self.dir}: record {row.get('record_id') or n} was graded otherwise ({why}); resuming "
                                 "there would serve it as this grading's: choose another --out")

    def measured_baselines(self) -> list[dict]:
        """The baseline rows this folder's batch measured so far."""
        return list(_rows(self.baselines_path))

    def _append(self, path: Path, row: dict) -> None:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def add(self, rec: RunRecord, baseline=None) -> None:
        with self.lock:
            self._append(self.path, rec.to_row())
            if baseline is not None:
                self._append(self.baselines_path, baseline.to_row())
            self.done.add(record_key(rec.problem_id, rec.problem_sha256, rec.solution_sha256, rec.model))

    def records(self) -> list[RunRecord]:
        rows = []
        for r in _rows(self.path):
            try:
                rows.append(RunRecord.from_row(r))
            except ValueError:
                continue
        return rows

    def close(self) -> None:
        self._lock.close()

    def write_parquet(self) -> Path:
        import pyarrow.parquet as pq

        out = self.dir / "records.parquet"
        tmp = out.with_suffix(".parquet.tmp")
        pq.write_table(to_table(self.records(), RunRecord), tmp)
        os.replace(tmp, out)
        return out


def _end_torn_line(path: Path) -> None:
    """A crash mid-write leaves a torn last line: end it, so that the next row starts a line of its own."""
    if path.exists():
        with open(path, "rb+") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    f.write(b"\n")


def _rows(path: Path):
    """The JSON objects of a JSONL file the sink appends to, lines cut by a crash skipped; none if it is not there."""
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(r, dict):
            yield r


def read_submission(path: str | Path) -> str:
    """A submission file's text as it is graded (and hashed): UTF-8, undecodable bytes replaced, line ends as Python
    reads them (a CRLF file is graded as LF)."""
    return Path(path).read_text(encoding="utf-8", errors="replace")


def _resolved(jobs, ps: ProblemSet, suite, sink: RecordSink, options: Options):
    """(job, problem, code, model) for every job not finished yet and not already queued (a manifest that
    names one submission twice grades it once), each problem's together in the order problems first appear."""
    todo, queued = [], set()
    for job in jobs:
        model = job.model or options.model
        try:
            code = read_submission(job.submission)
        except OSError as e:
            print(f"skip {job.submission}: {e}")
            continue
        try:
            problem = ps.load(job.problem, suite)
        except ProblemError as e:
            print(f"skip {job.submission}: {e}")
            continue
        key = record_key(problem.problem_id, problem.sha256, source_sha256(code), model)
        if key in sink.done or key in queued:
            continue
        queued.add(key)
        todo.append((job, problem, code, model))
    return grouped_by_problem(todo, lambda t: t[1].problem_id)


def grouped_by_problem(items: list, problem_id) -> list:
    """`items` with each problem's together, problems in the order they first appear: a device's resident judge then
    prepares each problem's reference once."""
    first: dict[str, int] = {}
    for item in items:
        first.setdefault(problem_id(item), len(first))
    return sorted(items, key=lambda item: first[problem_id(item)])


def run_batch(batch, out_dir, *, suite=None, problems_root=None, options: Options | None = None,
              workers="auto", baselines: BaselineIndex | None = None, use_ray: bool = False,
              ray_address: str | None = None, progress: bool = True) -> RecordSink:
    options = options or Options()
    jobs = discover(batch)
    sink = RecordSink(out_dir, grading_of(options, visible_devices(workers)))
    baselines = baselines if baselines is not None else BaselineIndex([])
    for row in sink.measured_baselines():  # a resumed batch times the rest against the rows its first part measured
        baselines.add(row)
    ps = ProblemSet(problems_root)
    todo = _resolved(jobs, ps, suite, sink, options)
    bar = _progress(len(todo), progress, skipped=len(jobs) - len(todo))
    outcomes = Counter()

    shown = threading.Lock()  # builds end on the build stage's threads

    def finished(rec: RunRecord, base) -> None:
        sink.add(rec, base)
        with shown:
            outcomes[OUTCOMES.get(rec.status, "failed")] += 1
            bar.set_postfix(outcomes, refresh=False)  # the bar: done / total, rate and ETA, then the verdicts so far
            bar.update(1)

    def built(res: dict) -> None:
        with shown:
            outcomes["built" if res.get("status") != "compile_error" else "build failed"] += 1
            bar.set_postfix(outcomes)

    if use_ray:
        from kb_data.harness.ray_backend import run_on_ray

        for rec, base in run_on_ray(todo, options, baselines, address=ray_address):
            finished(rec, base)
    else:
        sink.harness_failures = run_pool(todo, visible_devices(workers), options, baselines, finished, built)
    bar.close()
    if sink.path.exists():
        sink.write_parquet()
    sink.close()
    return sink


def run_pool(todo, devices: list[str], options: Options, baselines, on_record, on_built=None) -> list[str]:
    """One thread per device, each grading jobs from a shared queue in its judge process (kept between jobs of one
    problem when `options.resident_judge`: the queue is ordered by problem), while the build stage
    compiles the queued submissions' extensions ahead of them, several at once (prebuild): a grade then takes its
    build from the cache, or waits for the one under way, and the GPU does not wait for a compiler while built work
    is queued. grade() never raises for a bad submission; where the harness itself fails on a job, the job gets no
    record (a resumed batch grades it again), the others go on, and the failures come back as messages."""
    options = replace(options, resident_judge=options.resident_judge is not False)
    baselines = baselines if baselines is not None else BaselineIndex([])

    def grade_on(device: str, item):
        job, problem, code, model = item
        rec, base = grade(problem, code, name=job.submission, options=replace(options, device=device, model=model),
                          baselines=baselines)
        if base is not None:  # measured once: the problem's next submissions use it (and keep their judge warm)
            baselines.add(base.to_row())
        return rec, base

    failures = []
    with prebuild(todo, devices[0], options, on_built), \
            closing(map_per_device(devices, todo, grade_on, group=lambda t: t[1].problem_id)) as results:
        for item, graded, error in results:
            if error is None:
                on_record(*graded)
                continue
            failures.append(f"{item[0].submission} ({item[1].problem_id}): the harness failed: {type(error).__name__}: "
                            f"{error}")
            print("".join(traceback.format_exception(error)), file=sys.stderr)
    return failures


@contextmanager
def prebuild(todo, device: str, options: Options, on_built=None):
    """Build the extensions of every queued submission that has any, BUILDERS at a time in CPU sandboxes, in queue
    order; on leaving, the builds not started are dropped (a grade builds its own where it finds none)."""
    needs = [(problem, code) for _job, problem, code, _model in todo if build.needs_build(code)]
    if not needs:
        yield
        return
    cores = os.cpu_count() or 1
    workers = max(1, min(BUILDERS, (cores - GRADING_CORES) // BUILD_JOBS))
    level = resolve_level(options.sandbox)

    def one(problem, code):
        job = build_job_for(code, device, level, memory_limit(problem, device, options), options.timeout_s,
                            max_jobs=BUILD_JOBS)
        try:
            res = ensure_built(job, options.timeout_s + JUDGE_GRACE_S)
        except Exception as e:  # noqa: BLE001  (the grade builds it itself, and fails with the reason if it must)
            print(f"build stage: {problem.problem_id}: {type(e).__name__}: {e}", file=sys.stderr)
            return
        if on_built is not None:
            on_built(res)

    pool = ThreadPoolExecutor(workers, thread_name_prefix="kb-build")
    try:
        for problem, code in needs:
            pool.submit(one, problem, code)
        yield
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


BUILDERS = 8       # extension builds at once, at most
BUILD_JOBS = 2     # compiler jobs (MAX_JOBS) of a build: a load_inline extension is two translation units
GRADING_CORES = 4  # left to the GPU stage's judge and candidate, whose host pace is in the timed calls


OUTCOMES = {"ok": "ok", "incorrect": "wrong", "rejected": "rejected"}  # every other status counts as failed


def _progress(total: int, enabled: bool, skipped: int = 0):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="sub", desc="grading" + (f" ({skipped} done before)" if skipped else ""))
