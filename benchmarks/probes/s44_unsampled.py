"""The build-once batch test's C++ GELU (tests/test_batch.py) graded N times from one build cache: each record's
status and the framework sampler's account of CPU it could not follow (`unsampled_call_ms` in the timed batches,
`unsampled_no_work_call_ms` in the no-work ones; check_failed past 1 ms apart). Session 44: that check failed this
honest submission in the test suite twice (1.77 ms a call).

  PYTHONPATH=. python benchmarks/probes/s44_unsampled.py N [BURNERS]
"""
import json
import multiprocessing as mp
import os
import sys
import tempfile
from pathlib import Path

from kb_data.harness.batch import BatchJob, run_pool
from kb_data.harness.grade import Options
from kb_data.problems import ProblemSet
from tests.test_batch import CPP_GELU, GELU, SMALL_PROBLEMS


def _burn() -> None:
    while True:
        pass


def main(n: int, burners: int) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="s44_unsampled"))
    os.environ["KB_BUILD_CACHE"] = str(tmp / "builds")
    code = CPP_GELU.replace("BUILD_TAG", tmp.name.replace("-", "_"))
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    load = [mp.Process(target=_burn, daemon=True) for _ in range(burners)]
    for i in range(n):
        if i == 1:  # the first builds, unloaded
            [p.start() for p in load]
        records = []
        run_pool([(BatchJob(GELU, "sub.py", "m"), problem, code, "m")], ["cpu"],
                 Options(trials=3, warmup=1, timeout_s=600), None, lambda rec, base: records.append(rec), lambda b: None)
        for r in records:
            fs = json.loads(r.flag_details).get("framework_samples", {})
            print(i, r.status, r.flags, {k: fs.get(k) for k in ("unsampled_call_ms", "unsampled_no_work_call_ms",
                                                               "timed_call_ms", "no_work_call_ms", "new_threads")},
                  flush=True)
    [p.terminate() for p in load]


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
