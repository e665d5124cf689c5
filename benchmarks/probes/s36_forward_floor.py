"""Each counted batch's forward-floor figures (session 36): corpus entries graded N times at T trials, and per batch
(entry, trials, calls, claimed ms a call, the forward thread's ms a call less its no-work figure, the copies' thread's
ms over its allowance, the floor), then the record's status and flags.

  PYTHONPATH=. python benchmarks/probes/s36_forward_floor.py T N STEM [STEM ...]
"""
import sys

from kb_data.harness import grade as grading
from kb_data.harness import timed
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS

grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, as the other probes
grading.own_uid = lambda level: False
_bound, seen = timed._batch_bound, []


def bound(*args, **kwargs):
    b = _bound(*args, **kwargs)
    seen.append(b)
    return b


timed._batch_bound = bound
trials, n = int(sys.argv[1]), int(sys.argv[2])
for stem in sys.argv[3:]:
    path = next(CORPUS.glob(f"*/{stem}.py"))
    doc = path.read_text().split('"""')[1]
    problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
    for _ in range(n):
        seen.clear()
        rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(),
                    options=Options(device="cpu", trials=trials, warmup=1, timeout_s=600,
                                    require_custom_kernel="allow_framework" not in doc))[0]
        for b in seen:
            if b.get("counted") and "trusted_forward_ms" in b:
                print(stem, trials, b["calls"], round(b["claimed_ms"], 4), round(b["trusted_forward_ms"], 4),
                      round(b["aside_over_allowed_ms"], 4), round(b["floor_ms"], 4), rec.status, rec.flags, flush=True)
