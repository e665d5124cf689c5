"""`kb calibrate`: the harness graded on the problems' own references, to say whether its speedups mean anything here.

Each selected problem's reference is graded as a submission (framework ops allowed) through the batch pipeline
(harness/batch.py: one worker per GPU, resumable records), as it is ("eager") and, on a GPU, compiled as the
paired reference is compiled ("compiled"). What each must score is known from its baseline row: the same model as
the baseline scores 1; the eager reference against a torch.compile baseline scores the row's compile/eager ratio,
and the compiled one against an eager baseline the inverse. The report lists every record off its expectation by
more than the tolerance, and every record that is not `ok` or carries a failing flag: on a calibrated machine
both lists are empty. A benchmark, not a test: its figures go to BENCHMARKS.md.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from kb_data.io import write_bytes_atomic
from kb_data.problems import ProblemSet
from kb_data.schema import INFORMATIONAL_FLAGS, RunRecord
from kb_data.harness.batch import run_batch
from kb_data.harness.grade import Options

VARIANTS = ("eager", "compiled")
MODEL_PREFIX = "reference-"  # the records' model column: reference-eager, reference-compiled
SAME_MODEL_TOLERANCE = 0.02  # the compiled reference against its compiled baseline, the eager against its eager one
RATIO_TOLERANCE = 0.05       # the eager reference against a compiled baseline: a ratio of two stored medians

# The reference compiled as a module, as the judge compiles its paired reference (reference.compile_reference).
COMPILED_SELF = """

import copy as _copy
_Reference = Model


class Model(_Reference):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        twin = _copy.copy(self)
        twin.__class__ = _Reference
        self.__dict__["_compiled"] = torch.compile(twin, mode="{mode}")

    def forward(self, *args):
        return self.__dict__["_compiled"](*args)
"""


def reference_submission(code: str, variant: str, compile_mode: str) -> str:
    """The problem's own code as a submission of `variant` (its class Model is taken as the candidate's)."""
    if variant == "eager":
        return code
    if variant == "compiled":
        return code + COMPILED_SELF.format(mode=compile_mode)
    raise ValueError(f"unknown calibration variant {variant!r} (one of {', '.join(VARIANTS)})")


def write_jobs(ps: ProblemSet, ids: list[str], variants: list[str], folder: Path) -> Path:
    """One submission file per (problem, variant) under `folder`/submissions and the batch manifest naming them."""
    rows = []
    for variant in variants:
        for pid in ids:
            problem = ps.load(pid)
            path = folder / "submissions" / variant / (pid.replace("/", "__") + ".py")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(reference_submission(problem.code, variant, problem.rules["compile_mode"]), encoding="utf-8")
            rows.append({"problem": pid, "submission": str(path.resolve()), "model": MODEL_PREFIX + variant})
    manifest = folder / "calibration_jobs.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return manifest


@dataclass
class Verdict:
    problem_id: str
    variant: str
    status: str
    failing_flags: list
    speedup: float | None
    expected: float | None
    tolerance: float | None
    baseline_type: str | None
    per_call: float | None = None  # the median of per-call ratios: how much of a deviation the record's estimator made

    @property
    def deviation(self) -> float | None:
        return self.speedup / self.expected - 1 if self.speedup and self.expected else None

    @property
    def ok(self) -> bool:
        if self.status != "ok" or self.failing_flags:
            return False
        return self.deviation is None or abs(self.deviation) <= self.tolerance


def _variant(rec: RunRecord) -> str:
    return rec.model.removeprefix(MODEL_PREFIX)


def expectation(rec: RunRecord) -> tuple[float | None, float | None]:
    """(expected speedup, tolerance) of a calibration record, from the baseline it was timed against."""
    variant = _variant(rec)
    compiled_baseline = rec.baseline_type == "torch_compile"
    if (variant == "compiled") == compiled_baseline:
        return 1.0, SAME_MODEL_TOLERANCE
    if rec.eager_ms and rec.compile_ms:
        ratio = rec.compile_ms / rec.eager_ms
        return (ratio if variant == "eager" else 1 / ratio), RATIO_TOLERANCE
    return None, None


def verdicts(records: list[RunRecord]) -> list[Verdict]:
    out = []
    for rec in records:
        if not (rec.model or "").startswith(MODEL_PREFIX):
            continue
        expected, tol = expectation(rec)
        estimators = json.loads(rec.flag_details or "{}").get("paired_estimators") or {}
        out.append(Verdict(rec.problem_id, _variant(rec), rec.status,
                           sorted(f for f in rec.flags if f not in INFORMATIONAL_FLAGS), rec.speedup, expected, tol,
                           rec.baseline_type, estimators.get("per_call")))
    return sorted(out, key=lambda v: (v.variant, v.problem_id))


def report(vs: list[Verdict]) -> str:
    """The sweep in a few lines per variant, then every record off its expectation or not `ok`."""
    lines = []
    for variant in VARIANTS:
        mine = [v for v in vs if v.variant == variant]
        if not mine:
            continue
        devs = [v.deviation for v in mine if v.deviation is not None]
        within = sum(1 for v in mine if v.ok)
        lines.append(f"{variant}: {len(mine)} problems, {within} as expected, "
                     f"{sum(1 for v in mine if v.status != 'ok')} not ok, {sum(1 for v in mine if v.failing_flags)} flagged"
                     + (f"; speedup / expected: min {1 + min(devs):.3f} median {1 + statistics.median(devs):.3f} "
                        f"max {1 + max(devs):.3f}" if devs else ""))
    off = [v for v in vs if not v.ok]
    if off:
        lines.append("off expectation or not ok:")
        for v in off:
            what = (f"{v.status}" + (f" [{', '.join(v.failing_flags)}]" if v.failing_flags else "")
                    + (f", speedup {v.speedup:.3f}" + (f" (per call {v.per_call:.3f})" if v.per_call else "")
                       + f" where {v.expected:.3f} +/- {v.tolerance:.0%} is expected "
                       f"(baseline {v.baseline_type})" if v.deviation is not None else ""))
            lines.append(f"  {v.variant:8s} {v.problem_id}: {what}")
    return "\n".join(lines)


def calibrate(ids: list[str], out: Path, *, variants: list[str], problems_root=None, options=None, workers="auto",
              baselines=None, progress: bool = True) -> tuple[list[Verdict], list[str]]:
    """Grade the references of `ids` as submissions into `out` (resumable) and judge each record; also returns the
    jobs the harness itself failed on (no record)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ps = ProblemSet(problems_root)
    manifest = write_jobs(ps, ids, variants, out)
    options = replace(options or Options(), require_custom_kernel=False)
    sink = run_batch(manifest, out / "records", problems_root=problems_root, options=options, workers=workers,
                     baselines=baselines, progress=progress)
    wanted = {(pid, MODEL_PREFIX + v) for pid in ids for v in variants}
    vs = verdicts([r for r in sink.records() if (r.problem_id, r.model) in wanted])
    write_bytes_atomic(out / "calibration.json", json.dumps([{**v.__dict__, "deviation": v.deviation, "ok": v.ok}
                                                             for v in vs], indent=1, sort_keys=True).encode())
    return vs, sink.harness_failures
