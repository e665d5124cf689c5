"""Verdicts of one submission (session 34), graded through `grade()` with the judge in this process (strong sandbox),
on tests/corpus/problems:

  PYTHONPATH=. python benchmarks/probes/s34_verdicts.py STEM|PATH.py T N [samples]
      a corpus entry (tests/corpus/*/STEM.py, open/ included) or any file whose docstring names its `Problem:`, graded
      N times at T trials: status, flags, speedup, the error, each flag's detail and the batches whose outputs the flush
      watch read (with `samples`, the framework samples' figures too)
"""
import json
import sys
from pathlib import Path

from kb_data.harness import grade as grading
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from tests.corpus import CORPUS, SMALL_PROBLEMS


def main(argv: list) -> None:
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, as the other probes
    grading.own_uid = lambda level: False
    path = Path(argv[0]) if argv[0].endswith(".py") else next(CORPUS.glob(f"*/{argv[0]}.py"))
    doc = path.read_text().split('"""')[1]
    problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
    options = Options(device="cpu", trials=int(argv[1]), warmup=1, timeout_s=600,
                      require_custom_kernel="allow_framework" not in doc)
    for _ in range(int(argv[2])):
        rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(), options=options)[0]
        details = json.loads(rec.flag_details or "{}")
        if len(argv) > 3:
            print(json.dumps(details.get("framework_samples"))[:1500])
        print(rec.status, rec.flags, rec.speedup and round(rec.speedup, 3), (rec.error or "")[:200],
              {k: str(details.get(k))[:200] for k in rec.flags}, details.get("outputs_watched"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
