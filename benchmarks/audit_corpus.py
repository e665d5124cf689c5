"""The anti-cheat corpus as a runs dataset in upstream's layout, to audit on a GPU, and the check of the audit.

    python benchmarks/audit_corpus.py build DIR [--device cuda|cpu] [--variants 2]
    kb audit DIR --out AUDIT                       # on the GPU machine (benchmarks/h200.sh audit)
    python benchmarks/audit_corpus.py check AUDIT  # every verdict as the corpus docstrings say

`build` writes DIR/results.csv (upstream's 18 columns) and DIR/solutions/<model>_<gpu>_<problem>.txt: every
v3 corpus entry that runs on the device, `--variants` times (a variant differs by a comment line, so it is
a distinct solution, graded on its own), each published as correct (the verdict a grader without our checks
gives a cheat that matches numerically) except the honest entries' second variant, published as failed (a
fail -> pass the audit must show). Model names are `<variant>-<entry>`, which is how `check` finds the
entry's expected verdict. The entries that grade the reference itself (Options: allow_framework) must be
rejected here for calls_reference_ops or no_custom_kernel: an audit grades with the custom-kernel checks on.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.corpus import entries  # noqa: E402

GPU = "H100"  # the GPU the records say they were published for (any upstream GPU key)


def corpus_entries(device: str) -> list:
    return [e for e in entries() if e.problem.startswith("v3/") and e.device in (None, device)]


def build(out: Path, device: str, variants: int) -> int:
    from kb_data.schema import UPSTREAM_RUN_COLUMNS

    (out / "solutions").mkdir(parents=True, exist_ok=False)
    rows = []
    for e in corpus_entries(device):
        category, name = e.problem.split("/")[1:]
        problem = name + ".py"
        for v in range(variants):
            model = f"v{v}-{e.path.stem}"
            code = e.path.read_text(encoding="utf-8") + f"\n# audit corpus variant {v}\n"
            (out / "solutions" / f"{model}_{GPU}_{problem}.txt").write_text(code, encoding="utf-8")
            published = not (e.honest and v == 1)
            rows.append({"model": model, "gpu": GPU, "level": int(category.removeprefix("level")), "problem": problem,
                         "compiled": "True", "correct": str(published), "speedup": "1.5" if published else "",
                         "ref_ms": "0.3" if published else "", "sol_ms": "0.2" if published else "",
                         "baseline_type": "pytorch_eager" if published else "", "precision_used": "fp32",
                         "run_dir": "run_20261202_000000",
                         "solution_link": f"/data/kernelbench-v3/solutions/{model}_{GPU}_{problem}.txt",
                         "baseline_link": f"/data/kernelbench-v3/references/{problem}"})
    with open(out / "results.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, UPSTREAM_RUN_COLUMNS, restval="", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{out}: {len(rows)} records, {len(rows)} distinct solutions")
    return 0


FRAMEWORK_FLAGS = {"calls_reference_ops", "no_custom_kernel"}  # an audit grades with the custom-kernel checks on


def expected(e) -> tuple[str, list[str], set[str]]:
    """(the status the audit must give, flags it must carry, flags of which it must carry one); 'caught' = any
    status but ok. An entry graded with the framework allowed is rejected for it (on the reference's heavy op, or on
    running no kernel of its own), unless its process ends first (memory_exceeded, timeout)."""
    if "allow_framework" in e.options and e.status in ("ok", "unaffected", "rejected"):
        return "rejected", e.flags, FRAMEWORK_FLAGS
    return e.status, e.flags, set()


def check(audit_out: Path, device: str) -> int:
    import pyarrow.parquet as pq

    by_stem = {e.path.stem: e for e in corpus_entries(device)}
    bad, n = [], 0
    for r in pq.read_table(audit_out / "audit.parquet").to_pylist():
        e = by_stem[r["model"].split("-", 1)[1]]
        status, flags, one_of = expected(e)
        got = set(r["flags"] or [])
        n += 1
        ok = (r["status"] != "ok") if status == "caught" else (
            r["status"] == status and set(flags) <= got and (not one_of or bool(one_of & got)))
        if r["failure_cause"] == "environment":
            ok = False  # a toolchain failure on the GPU machine is a finding of its own
        if not ok:
            bad.append({"model": r["model"], "want": [status, flags, sorted(one_of)], "got": [r["status"], r["flags"], r["error"]]})
    print(json.dumps({"audited": n, "unexpected": bad}, indent=1, default=str))
    return 1 if bad or not n else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("build")
    p.add_argument("out", type=Path)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--variants", type=int, default=2)
    p = sub.add_parser("check")
    p.add_argument("audit_out", type=Path)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    a = ap.parse_args(argv)
    return build(a.out, a.device, a.variants) if a.cmd == "build" else check(a.audit_out, a.device)


if __name__ == "__main__":
    sys.exit(main())
