"""The build-once batch test's two gradings (tests/test_batch.py: one C++ GELU source under two models, built once
by run_pool's build stage) graded N times, each in a fresh build cache: status, error and stage times of each record,
and a failing record's flag details (session 43: a `check_failed` seen once under the test suite's load).

  PYTHONPATH=. python benchmarks/probes/s43_build_once.py N
"""
import json
import os
import sys
import tempfile
from pathlib import Path

from kb_data.harness.batch import BatchJob, run_pool
from kb_data.harness.grade import Options
from kb_data.problems import ProblemSet
from tests.test_batch import CPP_GELU, GELU, SMALL_PROBLEMS


def main(n: int) -> None:
    for i in range(n):
        tmp = Path(tempfile.mkdtemp(prefix="s43_build_once"))
        os.environ["KB_BUILD_CACHE"] = str(tmp / "builds")
        code = CPP_GELU.replace("BUILD_TAG", tmp.name.replace("-", "_"))
        problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
        todo = [(BatchJob(GELU, "sub.py", model), problem, code, model) for model in ("a", "b")]
        records, built = [], []
        run_pool(todo, ["cpu"], Options(trials=3, warmup=1, timeout_s=600), None,
                 lambda rec, base: records.append(rec), built.append)
        for r in records:
            print(i, r.model, r.status, r.error, r.harness_seconds, flush=True)
            if r.status != "ok":
                print(json.dumps(json.loads(r.flag_details), indent=1)[:6000], flush=True)
        print(i, "built", built, flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
