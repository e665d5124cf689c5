"""Probe: how many input-sized tensors the judge holds at each request to the candidate (BENCHMARKS.md, "The resident
judge", on v0.1 FrobeniusNorm running the H200 out of memory).

v0.1 FrobeniusNorm's 112x64x512x512 input is shrunk to 4x8x64x64, and the batch is one call, as the GPU's batch is
for 7.5 GB tensors. Before each `calibrate`, `forward` and `timed` request the judge's live tensors are counted (distinct
storages at least the input's size). Prints the status, then (command, stage, storages alive): how many requests.
Usage: python benchmarks/probes/judge_memory_probe.py [--device cpu|cuda:0]
"""
from __future__ import annotations

import argparse
import gc
from collections import Counter
from pathlib import Path

import torch

from kb_data.harness import judge as judge_mod
from kb_data.harness import sandbox, session
from kb_data.rules import rules_for, with_checks

PROBLEM = Path(__file__).resolve().parents[2] / "problems" / "v0.1" / "level1" / "37_FrobeniusNorm_.py"
SHRUNK = {"batch_size = 112": "batch_size = 4", "features = 64": "features = 8", "dim1 = 512": "dim1 = 64",
          "dim2 = 512": "dim2 = 64"}
SUBMISSION = ("import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n"
              "    def forward(self, x):\n        return x / torch.norm(x, p='fro')\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    code = PROBLEM.read_text()
    for a, b in SHRUNK.items():
        code = code.replace(a, b)
    numel = 4 * 8 * 64 * 64
    seen = []
    real = session.Candidate.request

    def request(self, msg, stage):
        if msg.get("cmd") in ("forward", "timed", "calibrate"):
            gc.collect()
            big = {o.untyped_storage().data_ptr() for o in gc.get_objects()
                   if isinstance(o, torch.Tensor) and o.numel() >= numel}
            seen.append((msg["cmd"], stage, len(big)))
        return real(self, msg, stage)

    session.Candidate.request = request
    job = {"problem_id": "v0.1/level1/37_FrobeniusNorm_", "problem_code": code, "rules": with_checks(rules_for("v0.1")),
           "submission_code": SUBMISSION, "device": args.device, "timeout_s": 300,
           "sandbox_level": sandbox.resolve_level("auto"), "memory_limit_bytes": 8 << 30, "trials": 8, "warmup": 1,
           "pair_reference": True, "require_custom_kernel": False, "max_batch": 1}
    res = judge_mod.judge(job)
    print(res["status"], res["error"])
    for key, n in Counter(seen).items():
        print(key, n)


if __name__ == "__main__":
    main()
