"""Grading as Ray tasks (`num_gpus=1` each on GPU clusters): the very same `grade()` in each task.

Ray is an optional extra (`pip install 'kb-data[ray]'`). Ray schedules the tasks and
restarts lost workers; each task still grades in an isolated child process.
"""
from __future__ import annotations

from dataclasses import replace


def _grade_task(problem_id: str, problem_code: str, problems_revision: str | None, code: str, name: str,
                options, baseline_rows: list):
    from kb_data.problems import load_source
    from kb_data.harness.baselines import BaselineIndex
    from kb_data.harness.grade import grade

    rec, base = grade(load_source(problem_code, problem_id), code, name=name, options=options,
                      baselines=BaselineIndex(baseline_rows), problems_revision=problems_revision)
    return rec.to_row(), (base.to_row() if base is not None else None)


def run_on_ray(todo, options, baselines, address: str | None = None, num_gpus: float | None = None):
    """Yield (RunRecord, Baseline | None) as tasks finish."""
    try:
        import ray
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'kb-data[ray]'") from None
    from kb_data.schema import Baseline, RunRecord
    from kb_data.problems import problems_revision_of

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    if num_gpus is None:
        num_gpus = 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0
    task = ray.remote(num_gpus=num_gpus, max_retries=1)(_grade_task)
    rows = [r for v in (baselines.rows.values() if baselines else []) for r in v]
    rows_ref = ray.put(rows)
    revisions: dict = {}
    pending = []
    for job, problem, code, model in todo:
        rev = revisions.setdefault(problem.problem_id, problems_revision_of(problem))
        # the task picks its own device: Ray sets CUDA_VISIBLE_DEVICES for it
        pending.append(task.remote(problem.problem_id, problem.code, rev, code, job.submission,
                                   replace(options, model=model, device=None), rows_ref))
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        rec_row, base_row = ray.get(done[0])
        yield RunRecord.from_row(rec_row), (Baseline.from_row(base_row) if base_row else None)
