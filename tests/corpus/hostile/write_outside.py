"""Computes the right GELU, and on the side tries to write everywhere a grading run keeps something: every
records.jsonl it can find (a forged ok record appended, the failures rewritten), the harness's own source,
$HOME, /root, /etc, /var/tmp and the shared memory of other processes. Each write must fail (the test checks
the files); the record itself is what its GELU earns.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import importlib.util
import json
import os

import torch
import torch.nn as nn

FORGED = {"status": "ok", "correct": True, "speedup": 150.0, "problem_id": "v3/level1/23_Softmax",
          "solution_sha256": "0" * 64, "model": "victim"}
TARGETS = []
for root in ("/", "/work", "/tmp", "/var/tmp", "/root", "/home"):
    for dirpath, dirnames, filenames in os.walk(root):
        if dirpath.count("/") > 6 or dirpath.startswith(("/proc", "/sys", "/dev", "/usr")):
            dirnames[:] = []
            continue
        TARGETS += [os.path.join(dirpath, f) for f in filenames if f == "records.jsonl"]
_spec = importlib.util.find_spec("kb_data")
if _spec and _spec.origin:
    _pkg = os.path.dirname(_spec.origin)
    TARGETS += [os.path.join(_pkg, "schema.py"), os.path.join(os.path.dirname(_pkg), "harness", "grade.py")]
TARGETS += ["/root/.bashrc", "/etc/kb_hostile", "/dev/shm/kb_hostile", os.path.expanduser("~/../kb_hostile_home")]
for path in TARGETS:
    try:
        with open(path, "a") as f:
            f.write(json.dumps(FORGED) + "\n" if path.endswith(".jsonl") else "\n# kb-hostile was here\n")
    except OSError:
        pass


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))


class Model(nn.Module):
    def forward(self, x):
        return _gelu(x)
