"""Grading from Python, for training loops: (problem, source) pairs in, run records out as they finish.

    from kb_data.harness.rewards import grade_sources, RewardPolicy

    policy = RewardPolicy()
    for i, rec in grade_sources([("v3/level1/26_GELU_", source_a), ("v3/level1/23_Softmax", source_b)]):
        print(i, rec.status, policy(rec))

The same pipeline as `kb eval --batch` (harness/batch.py): every submission graded by `grade()` in its own
sandbox, one worker thread per device, the shipped baselines unless others are given, and with `out=` the same
resumable records folder (a pair graded before is not graded again: its stored record comes back).
"""
from __future__ import annotations

import math
from contextlib import closing
from dataclasses import dataclass, replace
from typing import Iterable, Iterator

from kb_data.problems import ProblemError, ProblemSet
from kb_data.schema import INFORMATIONAL_FLAGS, RunRecord
from kb_data.harness.baselines import BaselineIndex
from kb_data.harness.batch import RecordSink, grading_of, grouped_by_problem, record_key, visible_devices
from kb_data.harness.grade import Options, grade
from kb_data.io import source_sha256
from kb_data.harness.worker import map_per_device


def grade_sources(pairs: Iterable[tuple[str, str]], *, options: Options | None = None, workers="auto",
                  baselines: BaselineIndex | None = None, out=None, suite: str | None = None,
                  problems_root=None) -> Iterator[tuple[int, RunRecord]]:
    """Grade each (problem id or name, submission source) pair; yields (index of the pair, its RunRecord) in the
    order they finish. Every problem is resolved before anything is graded: an unknown one raises ProblemError
    naming all of them. Closing the iterator early stops the workers after the submissions they are grading."""
    options = options or Options()
    baselines = baselines if baselines is not None else BaselineIndex.shipped()
    ps = ProblemSet(problems_root)
    items, unknown = [], []
    for i, (problem_ref, source) in enumerate(pairs):
        if not isinstance(source, str):
            raise TypeError(f"pair {i}: the submission must be its source as a str, got {type(source).__name__}")
        try:
            items.append((i, ps.load(problem_ref, suite), source))
        except ProblemError as e:
            unknown.append(f"pair {i}: {e}")
    if unknown:
        raise ProblemError("unknown problems, nothing graded:\n" + "\n".join(unknown))
    sink = RecordSink(out, grading_of(options, visible_devices(workers))) if out is not None else None
    try:
        stored = {}
        if sink is not None:
            stored = {record_key(r.problem_id, r.problem_sha256, r.solution_sha256, r.model): r for r in sink.records()}
        todo = []
        for i, problem, source in items:
            key = record_key(problem.problem_id, problem.sha256, source_sha256(source), options.model)
            if key in stored:
                yield i, stored[key]
            else:
                todo.append((i, problem, source))
        yield from _stream(todo, visible_devices(workers), options, baselines, sink)
    finally:
        if sink is not None:
            sink.close()


def _stream(todo, devices, options, baselines, sink) -> Iterator[tuple[int, RunRecord]]:
    options = replace(options, resident_judge=options.resident_judge is not False)
    todo = grouped_by_problem(todo, lambda t: t[1].problem_id)

    def grade_on(device: str, item):
        i, problem, source = item
        rec, base = grade(problem, source, name=f"submission_{i}.py", options=replace(options, device=device),
                          baselines=baselines)
        if sink is not None:
            sink.add(rec, base)
        return rec

    # closing the generator (an early close of grade_sources) lets the workers finish what they hold, no more
    failed = []
    with closing(map_per_device(devices, todo, grade_on, group=lambda t: t[1].problem_id)) as results:
        for (i, _, _), rec, error in results:
            if error is not None:  # grade() never raises for a bad submission: the harness's own failure, said once
                failed.append((i, error))  # every other pair is graded first (and kept in `out`)
                continue
            yield i, rec
    if failed:
        raise RuntimeError("grading failed in the harness for pair(s) " + "; ".join(
            f"{i}: {type(e).__name__}: {e}" for i, e in failed) + " (every other pair was graded)") from failed[0][1]


@dataclass(frozen=True)
class RewardPolicy:
    """What a run record earns, stated in full. A correct submission earns `correct`, plus `speedup_weight` x
    log2 of its speedup where that is over 1 (capped at `speedup_cap`): 2x faster than the baseline adds one
    `speedup_weight`, a slower one earns `correct` alone, so that being right always pays at least as much as being
    wrong. A submission the anti-cheat rejects earns `rejected`, below a wrong one, so that a hack never pays more
    than an honest failure, and so does one whose grading ended otherwise after a failing flag was raised (a hack
    that crashes its grading once caught stays caught); every other status earns `failed`. On a problem whose
    reference output hardly moves with its inputs (`degenerate_problem`: a constant, or nearly one) the speed is of
    work the output does not need, and earns nothing unless `degenerate_speedup` (zeros returned after a wait earned
    a 9x kernel's reward where the output is always 0: red team, session 51)."""
    correct: float = 1.0
    speedup_weight: float = 1.0
    speedup_cap: float = 16.0
    incorrect: float = 0.0
    failed: float = 0.0
    rejected: float = -1.0
    degenerate_speedup: bool = False

    def __call__(self, rec: RunRecord) -> float:
        if rec.status == "rejected" or any(f not in INFORMATIONAL_FLAGS for f in rec.flags or []):
            return self.rejected
        if rec.status == "ok" and rec.correct:
            if rec.speedup is None or not math.isfinite(rec.speedup) or rec.speedup <= 0 or (
                    "degenerate_problem" in (rec.flags or []) and not self.degenerate_speedup):
                return self.correct
            return self.correct + self.speedup_weight * math.log2(min(max(rec.speedup, 1.0), self.speedup_cap))
        if rec.status == "incorrect":
            return self.incorrect
        return self.failed
