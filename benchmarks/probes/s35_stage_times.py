"""Stage times of one grading (session 35): a corpus entry graded once through grade() at 5 trials, its verdict, wall
seconds and the record's harness_seconds (the judge's stages).

  PYTHONPATH=. python benchmarks/probes/s35_stage_times.py STEM
"""
import sys
import time

from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS

path = next(CORPUS.glob(f"*/{sys.argv[1]}.py"))
doc = path.read_text().split('"""')[1]
problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
options = Options(device="cpu", trials=5, warmup=1, timeout_s=600, require_custom_kernel="allow_framework" not in doc)
t0 = time.time()
rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(), options=options)[0]
print(rec.status, rec.flags, round(time.time() - t0, 2), rec.harness_seconds)
