# Session 46: grade corpus files as the caller (run it as a user who is not root) at a given level and device, each
# record's verdict on one line.   python s46_grade_as.py DEVICE LEVEL FILE...
import json
import sys
import time
from pathlib import Path

from kb_data.harness.baselines import BaselineIndex
from kb_data.harness.grade import Options, grade
from kb_data.problems import ProblemSet, default_problems_root

device, level = sys.argv[1], sys.argv[2]
for name in sys.argv[3:]:
    text = Path(name).read_text()
    doc = text.split('"""')[1]
    problem = next(l.split(":", 1)[1].strip() for l in doc.splitlines() if l.startswith("Problem:"))
    t = time.time()
    opt = Options(device=device, timeout_s=600, sandbox=level, require_custom_kernel="allow_framework" not in doc)
    rec = grade(ProblemSet(default_problems_root()).load(problem), text, name=name, options=opt,
                baselines=BaselineIndex.shipped())[0]
    print(json.dumps({"file": Path(name).stem, "status": rec.status, "sandbox": rec.sandbox, "flags": rec.flags,
                      "speedup": rec.speedup, "wall_s": round(time.time() - t, 1),
                      "error": (rec.error or "")[-400:]}), flush=True)
