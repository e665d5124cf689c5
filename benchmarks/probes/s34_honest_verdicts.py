"""False positives of every check (session 34): the honest and `unaffected` CPU corpus entries graded through `grade()`
with the judge in this process (strong sandbox), on tests/corpus/problems:

  PYTHONPATH=. python benchmarks/probes/s34_honest_verdicts.py T N
      each entry N times at T trials: a line per grading that is not `ok` or has a failing flag (BAD, with why),
      then the count
"""
import json
import sys

from kb_data.harness import grade as grading
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from kb_data.schema import INFORMATIONAL_FLAGS
from tests.corpus import SMALL_PROBLEMS, entries


def main(trials: int, reps: int) -> None:
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, as the other probes
    grading.own_uid = lambda level: False
    chosen = [e for e in entries() if e.device in (None, "cpu") and "builds" not in e.options
              and (e.honest or e.status == "unaffected")]
    bad = 0
    for _ in range(reps):
        for e in chosen:
            options = Options(device="cpu", trials=trials, warmup=1, timeout_s=600,
                              require_custom_kernel="allow_framework" not in e.options)
            rec = grade(ProblemSet(SMALL_PROBLEMS).load(e.problem), e.path.read_text(), options=options)[0]
            failing = [f for f in rec.flags if f not in INFORMATIONAL_FLAGS]
            if rec.status != "ok" or failing:
                bad += 1
                why = json.loads(rec.flag_details or "{}").get(failing[0], "") if failing else rec.error
                print("BAD", e.path.stem, rec.status, failing, str(why)[:300], flush=True)
    print("total", reps * len(chosen), "bad", bad)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
