"""Re-run the problem-level degenerate check with the current criteria, and compare with the shipped checks.

    python benchmarks/recheck_degenerate.py [--device cpu] [--suite v0.1 --category level2 ...] [--max-input-gb 0.6]

For each problem whose inputs fit (--max-input-gb, and a compile footprint under 4x that), the reference runs on
two timing input sets and `degenerate_reason` judges the samples with the suite's tolerance, as the baseline sweep
does. Rows that differ from `kb_data/data/problem_checks_h200.jsonl` are marked. On the CPU the inputs come from
the CPU generator, not CUDA's: where a problem seeds its weights and inputs alike (v0.1's same-seed rule), the
two streams can correlate on one device and not the other, so a GPU sweep stays the reference for shipping.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb_data.harness.reference import _input_specs, build_reference, make_inputs, problem_degenerate_reason  # noqa: E402
from kb_data.harness.sweep import footprint_bytes  # noqa: E402
from kb_data.paths import DATA_DIR  # noqa: E402
from kb_data.meta import tensor_bytes  # noqa: E402
from kb_data.problems import ProblemSet, exec_problem_code  # noqa: E402


def recheck(pid: str, ps: ProblemSet, device: str, max_bytes: float) -> str | None:
    p = ps.load(pid)
    mod = exec_problem_code(p.code, pid)
    specs = [x for x in _input_specs(mod) if isinstance(x, torch.Tensor)]
    if sum(tensor_bytes(x) for x in specs) > max_bytes or footprint_bytes(p.code, pid) > 4 * max_bytes:
        raise MemoryError("inputs too large for --max-input-gb")
    ref = build_reference(mod, p.rules, device, 0)
    return problem_degenerate_reason(ref, p.rules, [make_inputs(mod, p.rules["timing_seed"] + j, device) for j in range(2)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--suite", action="append")
    ap.add_argument("--category", action="append")
    ap.add_argument("--max-input-gb", type=float, default=0.6)
    ap.add_argument("--checks", type=Path, default=DATA_DIR / "problem_checks_h200.jsonl")
    args = ap.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    ps = ProblemSet()
    shipped = {r["problem_id"]: r for r in map(json.loads, args.checks.read_text().splitlines()) if r}
    ids = [pid for s in args.suite or [None] for c in args.category or [None] for pid in ps.ids(s, c)]
    changed = 0
    for pid in dict.fromkeys(ids):
        t0 = time.monotonic()
        try:
            now = recheck(pid, ps, args.device, args.max_input_gb * 1e9)
        except MemoryError as e:
            print(f"{pid}: skipped ({e})", flush=True)
            continue
        except Exception as e:
            print(f"{pid}: error {type(e).__name__}: {str(e)[:120]}", flush=True)
            continue
        old = shipped.get(pid, {}).get("degenerate_reason")
        differs = (now is None) != (old is None) and pid in shipped
        changed += differs
        print(f"{pid}: now={now} shipped={old} ({time.monotonic() - t0:.0f} s)" + ("  <-- differs" if differs else ""),
              flush=True)
    print(f"{changed} problem(s) judged differently from {args.checks.name}")


if __name__ == "__main__":
    main()
