"""A corpus entry graded three times in one process (session 42): the first grading pays the worker's start, the
others are the steady state a test worker sees. Prints status, wall seconds, the worker's wall and the stages' sum.

  PYTHONPATH=. python benchmarks/probes/s42_steady_grading.py STEM
"""
import json
import sys
import time

from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS

path = next(CORPUS.glob(f"*/{sys.argv[1]}.py"))
problem = next(line.split(":", 1)[1].strip() for line in path.read_text().split('"""')[1].splitlines()
               if line.startswith("Problem:"))
for _ in range(3):
    t0 = time.time()
    rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(),
                options=Options(device="cpu", trials=5, warmup=1, timeout_s=600))[0]
    stages = json.loads(rec.harness_seconds)
    print(rec.status, round(time.time() - t0, 2), "worker_wall", stages["worker_wall"], "stages",
          round(sum(v for k, v in stages.items() if k != "worker_wall" and "." not in k), 2), flush=True)
