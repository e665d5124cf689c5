"""Probe: where a grade's judge spends its time (cProfile of the judge process), for a few honest corpus entries.

The judge runs as it always does (sandboxed candidate, paired loop); only the process it runs in is a spawned one
under cProfile instead of a forkserver worker. Prints the record's stage times and the top functions.
Usage: python benchmarks/probes/judge_profile.py [ENTRY ...]   (default: triton_gelu reference_softmax)
An ENTRY with a slash is a problem id: its reference graded as its own submission, as `kb calibrate` does (eager).
"""
from __future__ import annotations

import cProfile
import io
import multiprocessing as mp
import os
import pstats
import sys


def _profiled(fn, job, path):
    prof = cProfile.Profile()
    res = prof.runcall(fn, job)
    prof.dump_stats(path)
    return res


def run_profiled(fn, job, timeout_s, path):
    with mp.get_context("spawn").Pool(1) as pool:
        return pool.apply(_profiled, (fn, job, path))


def main() -> None:
    sys.path.insert(0, os.getcwd())
    from kb_data.harness import grade as grade_mod
    from kb_data.problems import ProblemSet
    from tests.corpus import entries

    names = sys.argv[1:] or ["triton_gelu", "reference_softmax"]
    out = os.environ.get("OUT", ".")
    for name in names:
        if "/" in name:  # a problem's reference as its own submission
            problem = ProblemSet().load(name)
            code, source, custom = problem.code, name, False
        else:
            e = next(x for x in entries() if x.path.stem == name)
            problem, code, source, custom = ProblemSet().load(e.problem), e.path.read_text(), str(e.path), \
                "allow_framework" not in e.options
        path = f"{out}/judge_{name.replace('/', '_')}.prof"
        grade_mod.run_isolated = lambda fn, job, timeout, _p=path: run_profiled(fn, job, timeout, _p)
        rec, _ = grade_mod.grade(problem, code, name=source,
                                 options=grade_mod.Options(device=os.environ.get("KB_DEVICE", "cuda:0"), measure_baseline=False,
                                                           require_custom_kernel=custom))
        print(f"== {name}: status={rec.status} flags={rec.flags} n_trials={rec.n_trials} stages={rec.harness_seconds}")
        for key in ("tottime", "cumulative"):
            s = io.StringIO()
            pstats.Stats(path, stream=s).sort_stats(key).print_stats(28)
            print(s.getvalue()[-9000:])


if __name__ == "__main__":
    main()
