"""Verdicts of the flush watch (session 33), graded through `grade()` with the judge in this process (strong
sandbox), on tests/corpus/problems:

  PYTHONPATH=. python benchmarks/probes/s33_flush_watch.py honest T N      the honest and `unaffected` CPU corpus
      entries N times at T trials: a line per grading flagged timer_tampered (BAD, with why), then the count
  PYTHONPATH=. python benchmarks/probes/s33_flush_watch.py entry STEM T N  one entry (tests/corpus/*/STEM.py, open/
      included) N times: status, speedup and the timer_tampered detail of each grading
"""
import json
import sys

from kb_data.harness import grade as grading
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS, entries


def _grade(path, trials: int):
    doc = path.read_text().split('"""')[1]
    problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
    options = Options(device="cpu", trials=trials, warmup=1, timeout_s=600,
                      require_custom_kernel="allow_framework" not in doc)
    return grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(), options=options)[0]


def main(argv: list) -> None:
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, as the other probes
    grading.own_uid = lambda level: False
    if argv[0] == "honest":
        trials, reps = int(argv[1]), int(argv[2])
        chosen = [e.path for e in entries() if e.device in (None, "cpu") and "builds" not in e.options
                  and (e.honest or e.status == "unaffected")]
        bad = 0
        for _ in range(reps):
            for path in chosen:
                rec = _grade(path, trials)
                if "timer_tampered" in rec.flags:
                    bad += 1
                    print("BAD", path.stem, json.loads(rec.flag_details).get("timer_tampered"), flush=True)
        print("total", reps * len(chosen), "bad", bad)
    else:
        path = next(CORPUS.glob(f"*/{argv[1]}.py"))
        for _ in range(int(argv[3])):
            rec = _grade(path, int(argv[2]))
            print(rec.status, rec.speedup and round(rec.speedup, 2),
                  json.loads(rec.flag_details or "{}").get("timer_tampered"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
