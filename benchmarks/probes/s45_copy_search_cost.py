"""Corpus entries graded once each on the CPU: status, flags, wall time, the framework code made at run time a timed
call ran (`generated_call_ms`) and the judge's time searching it for framework copies (`copy_search_ms`, summed over
the timed batches). Session 45: the copy search of code made at run time (harness/copies.py).

  PYTHONPATH=. python benchmarks/probes/s45_copy_search_cost.py tests/corpus/honest/*.py ...
"""
import json, sys, time
from pathlib import Path
from tests.corpus import SMALL_PROBLEMS, entries
from tests.test_anticheat import _grade
want = {Path(p).resolve() for p in sys.argv[1:]}
for e in entries():
    if e.path.resolve() in want and e.device in (None, "cpu") and "builds" not in e.options:
        t = time.time()
        trials = next((int(o[7:]) for o in e.options if o.startswith("trials_")), 5)
        r = _grade(e, SMALL_PROBLEMS, "cpu", trials)
        fs = json.loads(r.flag_details or "{}").get("framework_samples")
        fs = fs if isinstance(fs, dict) else {}
        print(f"{e.path.parent.name}/{e.path.stem}", r.status, r.flags, f"{time.time()-t:.1f}s",
              "generated", fs.get("generated_call_ms"), "search_ms", fs.get("copy_search_ms"), (r.error or "")[:160], flush=True)
