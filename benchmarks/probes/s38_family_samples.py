"""Which op families' framework functions the kernel's samples of the timed calls fell in, for every family (not only
those the problem bars), per grading (session 38: is a single sample of a barred family evidence enough?). Corpus
entries or files whose docstring names a `Problem:`, each graded once at T trials, the judge in this process:

  PYTHONPATH=. python benchmarks/probes/s38_family_samples.py T ENTRY|PATH.py [...]
      e.g. PYTHONPATH=. python benchmarks/probes/s38_family_samples.py 30 tests/corpus/honest/*.py
"""
import json
import re
import sys
from pathlib import Path

from kb_data.harness import grade as grading
from kb_data.harness import profiled
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet
from kb_data.rules import OP_FAMILIES
from tests.corpus import CORPUS, SMALL_PROBLEMS


def main(argv: list) -> None:
    grading.run_isolated = lambda fn, job, timeout: fn(job)  # the judge in this process, as the other probes
    grading.own_uid = lambda level: False
    seen, judged = [], profiled.sampled_families

    def spy(functions: dict, families: list) -> dict:
        hits = {}
        for fam, spec in OP_FAMILIES.items():
            pattern = re.compile(spec["cpu"], re.I) if spec.get("cpu") else None
            found = {n[:90]: round(ms, 3) for n, ms in functions.items() if pattern and pattern.search(n)}
            if found:
                hits[fam] = found
        seen.append({"barred": families, "sampled": hits})
        return judged(functions, families)

    profiled.sampled_families = spy
    for arg in argv[1:]:
        path = Path(arg) if arg.endswith(".py") else next(CORPUS.glob(f"*/{arg}.py"))
        doc = path.read_text().split('"""')[1]
        if "Device: cuda" in doc or "builds" in doc:
            continue
        problem = next(line.split(":", 1)[1].strip() for line in doc.splitlines() if line.startswith("Problem:"))
        seen.clear()
        options = Options(device="cpu", trials=int(argv[0]), warmup=1, timeout_s=600,
                          require_custom_kernel="allow_framework" not in doc)
        rec = grade(ProblemSet(SMALL_PROBLEMS).load(problem), path.read_text(), options=options)[0]
        print(path.stem, rec.status, rec.flags, rec.speedup and round(rec.speedup, 2), json.dumps(seen)[:600], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
