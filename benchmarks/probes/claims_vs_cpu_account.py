"""Probe: the candidate's claimed times against the judge's clocks on a CPU grading (the round trip, and the sandbox
cgroup's CPU account), for honest entries and the open timing hacks. Prints each record's status, flags, speedup
and timing_bound. Session 21 ran it three times with a trial floor of (account - 0.25 ms) / 1.5 per call in
timed._batch_bound, not kept (BENCHMARKS.md, "On the CPU").
Usage (root, for the strong sandbox and its cgroup): PYTHONPATH=. python benchmarks/probes/claims_vs_cpu_account.py \\
    v3/level1/26_GELU_=tests/corpus/honest/torch_gelu_erf.py [PROBLEM=SUBMISSION ...]
"""
import json
import sys

from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import SMALL_PROBLEMS


def main() -> None:
    ps = ProblemSet(SMALL_PROBLEMS)
    for prob, path in (a.split("=") for a in sys.argv[1:]):
        with open(path, encoding="utf-8") as f:
            rec, _ = grade(ps.load(prob), f.read(), name=path, options=Options(device="cpu"))
        bound = json.loads(rec.flag_details or "{}").get("timing_bound", {})
        print(path.split("/")[-1][:40].ljust(40), rec.status, rec.flags, f"speedup={rec.speedup and round(rec.speedup, 2)}",
              {k: (round(v, 3) if isinstance(v, float) else v) for k, v in bound.items()}, flush=True)


if __name__ == "__main__":
    main()
