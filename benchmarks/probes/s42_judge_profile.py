"""Where a CPU grading's judge spends its time (session 42): a corpus entry judged in this process twice (the first
warms it), the second under cProfile, its 45 costliest calls by cumulative time.

  PYTHONPATH=. python benchmarks/probes/s42_judge_profile.py STEM
"""
import cProfile
import pstats
import sys

from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS
from tests.harness_support import _judge

path = next(CORPUS.glob(f"*/{sys.argv[1]}.py"))
problem = next(line.split(":", 1)[1].strip() for line in path.read_text().split('"""')[1].splitlines()
               if line.startswith("Problem:"))
loaded = ProblemSet(SMALL_PROBLEMS).load(problem)
_judge(loaded, path.read_text(), trials=5)
profile = cProfile.Profile()
profile.enable()
res = _judge(loaded, path.read_text(), trials=5)
profile.disable()
print(res.get("status"), res.get("flags"))
pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
