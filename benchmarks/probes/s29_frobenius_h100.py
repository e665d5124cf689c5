"""Session 29, last call: honest/triton_frobenius on an 80 GB card after the timed loop stopped holding the last
batch's calls (harness/timed.py): graded as the GPU corpus test grades it, its `GPU memory: 100` skip bypassed."""
import json

from kb_data.harness.baselines import BaselineIndex
from kb_data.problems import default_problems_root
from tests.corpus import entries
from tests.test_anticheat import _grade

entry = next(e for e in entries() if e.path.stem == "triton_frobenius")
rec = _grade(entry, default_problems_root(), "cuda:0", trials=None, baselines=BaselineIndex.shipped())
print(json.dumps({"status": rec.status, "flags": rec.flags, "error": (rec.error or "")[:600], "speedup": rec.speedup,
                  "stages": rec.harness_seconds}))
