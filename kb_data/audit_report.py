"""`kb audit` output: the audit as a pandas frame, its tables, an HTML page, and the audit dataset folder.

    frame = audit_frame(res.records, res.audited)   # one row per audited record, both verdicts side by side
    tabs = audit_tables(frame, res.records, res.audited)
    page = render_audit_html(tabs, res)

Every number comes from the records through pandas (and `kb_data.analysis` for fast_p); this module
formats and writes.
"""
from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pandas as pd

from . import analysis as A
from .schema import EAGER_BASELINE_TYPES, INFORMATIONAL_FLAGS, RunRecord, to_table

PS = (0.0, 1.0, 1.5, 2.0)
TITLES = {
    "verdicts": "Published verdict vs audited verdicts, per model x published GPU",
    "flips": "Every flip, with its reason",
    "wrong_outputs": "Passed as published, but compute wrong outputs here",
    "fast_p_published": "fast_p as published",
    "fast_p_audited": "fast_p audited (grouped by the GPU the record was published for)",
    "speedups": "Published speedups not reproduced here (same GPU model, same kind of baseline)",
    "skipped": "Records not graded, and why",
}
# a published speedup over the audit's by more than this, on the card it was published for and against the same kind
# of baseline, is not reproduced: paired timing moves a few percent from run to run, another host of the card more
SPEEDUP_CLAIM_MARGIN = 1.25
NOTES = [
    "published: the audited record's verdict as published (its accepted; for upstream records upstream's correct).",
    "published_rules: the audit's correct column: the outputs match the reference under the suite's published rules "
    "(its tolerance and published seeds), graded on this machine: what the original grader would say here.",
    "our_rules: the audit's accepted column: every check of this harness passed (status ok).",
    "environment: failures of this machine's toolchain (a package it lacks, an API today's torch no longer has, a "
    "compiler that rejects code the published run built, GPU code without a GPU), not of the solution.",
    "fast_p counts accepted records over all attempts of the group; published and audited speedups are against "
    "different baselines and machines, so compare the shares, not single speedups.",
    f"speedups: where the audit ran on the GPU model the record was published for, against the same kind of baseline "
    f"(eager or torch.compile), and both verdicts accept it, a published speedup more than {SPEEDUP_CLAIM_MARGIN}x the "
    f"one measured here is listed as not reproduced.",
]


# ---------------------------------------------------------------------------
# The frame

def audit_frame(records: list[RunRecord], audited: list[RunRecord]) -> pd.DataFrame:
    """One row per audit record joined with the record it audits (by audit_of = record_id)."""
    cols = ["model", "published_gpu", "problem_id", "audit_of", "published", "published_status", "published_speedup",
            "published_baseline_type", "gpu", "published_rules", "our_rules", "status", "error", "flags",
            "max_abs_err", "max_rel_err", "failure_cause", "speedup", "baseline_type", "change", "reason"]
    if not records:
        return pd.DataFrame(columns=cols)
    a = to_table(records, RunRecord).to_pandas()
    p = to_table(audited, RunRecord).to_pandas()[["record_id", "gpu", "status", "speedup", "baseline_type"]]
    p = p.drop_duplicates("record_id").rename(columns={"record_id": "audit_of", "gpu": "published_gpu",
                                                       "status": "published_status",
                                                       "speedup": "published_speedup",
                                                       "baseline_type": "published_baseline_type"})
    f = a.merge(p, on="audit_of", how="left", validate="many_to_one")
    f = f.rename(columns={"audit_published_accepted": "published", "correct": "published_rules", "accepted": "our_rules"})
    f["flags"] = f["flags"].map(lambda v: ", ".join(v) if v is not None and len(v) else "")
    f["change"] = [_change(pub, ours) for pub, ours in zip(f["published"], f["our_rules"])]
    f["reason"] = [_reason(r) for r in f.to_dict("records")]
    return f[cols].sort_values(["model", "published_gpu", "problem_id", "audit_of"], kind="stable").reset_index(drop=True)


def _change(published, ours) -> str:
    published, ours = bool(published), bool(ours)
    if published == ours:
        return "same"
    return "pass -> fail" if published else "fail -> pass"


_SUBMISSION_PATH = re.compile(r"^\S+\.py: ")  # the harness names the submission file first: ours, not news


def _first_line(s) -> str:
    s = s.strip() if isinstance(s, str) else ""  # a column of no error at all reads as NaN
    return _SUBMISSION_PATH.sub("", s.splitlines()[0])[:300] if s else ""


def _reason(r: dict) -> str:
    """Why the audited verdict is what it is, in one line (empty for an accepted record)."""
    if r["our_rules"]:
        return "" if r["published"] else f"accepted here; published as {r['published_status'] or 'failing'}"
    error = _first_line(r["error"])
    if r["failure_cause"] == "environment":
        return f"environment ({r['status']}): {error}"
    if r["published_rules"] is True or r["published_rules"] == 1:
        failing = [f for f in r["flags"].split(", ") if f and f not in INFORMATIONAL_FLAGS]
        return "our checks only: " + (", ".join(failing) if failing else error)
    if r["status"] == "incorrect":
        return f"wrong outputs: {error}"
    return f"{r['status']}: {error}"


# ---------------------------------------------------------------------------
# Tables

def verdict_table(f: pd.DataFrame) -> pd.DataFrame:
    """Per (model, published GPU): counts of each verdict, and the flips."""
    w = f.assign(_pub=f["published"].fillna(False).astype(bool), _rules=f["published_rules"].fillna(False).astype(bool),
                 _ours=f["our_rules"].fillna(False).astype(bool), _env=f["failure_cause"].eq("environment"),
                 _down=f["change"].eq("pass -> fail"), _up=f["change"].eq("fail -> pass"))
    g = w.groupby(["model", "published_gpu"], dropna=False, sort=True)
    out = pd.DataFrame({"n_audited": g.size(), "n_published_pass": g["_pub"].sum(),
                        "n_published_rules_pass": g["_rules"].sum(), "n_our_rules_pass": g["_ours"].sum(),
                        "n_pass_to_fail": g["_down"].sum(), "n_fail_to_pass": g["_up"].sum(),
                        "n_environment": g["_env"].sum()})
    return out.reset_index()


def flips(f: pd.DataFrame) -> pd.DataFrame:
    return f[f["change"] != "same"][["model", "published_gpu", "problem_id", "audit_of", "change", "reason",
                                     "status", "flags", "max_abs_err", "failure_cause"]].reset_index(drop=True)


def wrong_outputs(f: pd.DataFrame) -> pd.DataFrame:
    """Published as passing, and here the outputs are wrong: on the published seeds, or on a fresh secret seed."""
    wrong = f["status"].eq("incorrect") | f["error"].fillna("").str.startswith("wrong on a secret seed")
    return f[f["published"].fillna(False).astype(bool) & wrong][
        ["model", "published_gpu", "problem_id", "audit_of", "error", "max_abs_err", "max_rel_err"]].reset_index(drop=True)


def speedup_claims(f: pd.DataFrame) -> pd.DataFrame:
    """Records accepted as published and here, graded on the GPU model they were published for against the same kind
    of baseline, whose published speedup is more than SPEEDUP_CLAIM_MARGIN times the audit's: the claim over the
    measurement, largest first."""
    kind = lambda s: s.map(lambda t: "eager" if t in EAGER_BASELINE_TYPES else t)  # noqa: E731
    published, audited = pd.to_numeric(f["published_speedup"]), pd.to_numeric(f["speedup"])
    comparable = (f["published"].fillna(False).astype(bool) & f["our_rules"].fillna(False).astype(bool)
                  & f["gpu"].eq(f["published_gpu"]) & f["published_baseline_type"].notna()
                  & kind(f["baseline_type"]).eq(kind(f["published_baseline_type"])) & (published > 0) & (audited > 0))
    t = f[comparable][["model", "published_gpu", "problem_id", "audit_of", "baseline_type", "published_speedup",
                       "speedup"]].copy()
    t["claimed_over_measured"] = (published / audited)[comparable]
    return (t[t["claimed_over_measured"] > SPEEDUP_CLAIM_MARGIN]
            .sort_values("claimed_over_measured", ascending=False, kind="stable").reset_index(drop=True))


def fast_p_frames(records: list[RunRecord], audited: list[RunRecord]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """fast_p of the audited records as published, and of the audits grouped by the GPU they were published for."""
    if not records:
        empty = pd.DataFrame()
        return empty, empty
    before = A.fast_p_table(to_table(audited, RunRecord).to_pandas(), PS, ["model", "gpu"])
    published_gpu = {r.record_id: r.gpu for r in audited}
    after = to_table(records, RunRecord).to_pandas()
    after["gpu"] = after["audit_of"].map(published_gpu)
    return before, A.fast_p_table(after, PS, ["model", "gpu"])


def audit_tables(f: pd.DataFrame, records: list[RunRecord], audited: list[RunRecord],
                 skipped: list[tuple[RunRecord, str]] = ()) -> dict[str, pd.DataFrame]:
    before, after = fast_p_frames(records, audited)
    skip = pd.DataFrame([{"model": r.model, "gpu": r.gpu, "problem": r.problem, "record_id": r.record_id, "why": why}
                         for r, why in skipped], columns=["model", "gpu", "problem", "record_id", "why"])
    return {"verdicts": verdict_table(f), "flips": flips(f), "wrong_outputs": wrong_outputs(f),
            "fast_p_published": before, "fast_p_audited": after, "speedups": speedup_claims(f), "skipped": skip}


# ---------------------------------------------------------------------------
# Writing

def summary(f: pd.DataFrame, res) -> str:
    n = len(f)
    count = lambda s: int(s.fillna(False).astype(bool).sum())
    env = int(f["failure_cause"].eq("environment").sum()) if n else 0
    return (f"{res.source.label}: {n} records audited on {', '.join(sorted(set(f['gpu'].dropna()))) or '-'} "
            f"({len(res.skipped)} not graded); published pass {count(f['published']) if n else 0}, "
            f"published rules here {count(f['published_rules']) if n else 0}, our rules {count(f['our_rules']) if n else 0}; "
            f"flips: {int(f['change'].eq('pass -> fail').sum()) if n else 0} pass -> fail, "
            f"{int(f['change'].eq('fail -> pass').sum()) if n else 0} fail -> pass; {env} environment failures; "
            f"{len(speedup_claims(f)) if n else 0} published speedups not reproduced")


def render_audit_html(tabs: dict[str, pd.DataFrame], line: str, source_label: str) -> str:
    from .report import html_page

    esc = html.escape
    body = [f"<h1>Audit of {esc(source_label)}</h1>", f"<p class=summary>{esc(line)}</p>", "<ul class=notes>"]
    body += [f"<li>{esc(n)}</li>" for n in NOTES] + ["</ul>"]
    for name, t in tabs.items():
        body.append(f'<h2 id="{name}">{esc(TITLES[name])}</h2>')
        if t.empty:
            body.append("<p>None.</p>")
            continue
        body.append(t.to_html(index=False, na_rep="", float_format=lambda x: f"{x:.4g}", classes="records",
                              table_id=f"table-{name}", border=0))
    return html_page(f"Audit of {source_label}", body)


def write_outputs(res, frame: pd.DataFrame, tabs: dict[str, pd.DataFrame]) -> dict[str, Path]:
    """out/audit.csv (the frame), out/report/ (a CSV per table and index.html), out/dataset/ (the audit runs dataset)."""
    from .builders.runs import build_runs
    from .io import write_bytes_atomic

    out = Path(res.out)
    report = out / "report"
    report.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out / "audit.csv", frame.to_csv(index=False).encode("utf-8"))
    for name, t in tabs.items():
        write_bytes_atomic(report / f"{name}.csv", t.to_csv(index=False).encode("utf-8"))
    page = report / "index.html"
    write_bytes_atomic(page, render_audit_html(tabs, summary(frame, res), res.source.label).encode("utf-8"))
    paths = {"frame": out / "audit.csv", "report": page}
    if res.records:
        build_runs(res.records, out / "dataset")
        paths["dataset"] = out / "dataset"
    return paths


# ---------------------------------------------------------------------------
# The command

def cmd_audit(args) -> int:
    from .audit import Filters, audit, open_source
    from .harness.baselines import BaselineIndex
    from .harness.grade import Options

    src = open_source(args.source, args.revision, args.store, args.org, args.store_root)
    print(f"auditing {src.label} ({src.folder})", file=sys.stderr)
    opt = Options(gpu=args.gpu_key, timeout_s=args.timeout, trials=args.trials, warmup=args.warmup,
                  pair_reference=not args.no_pair)
    baselines = BaselineIndex.from_files(args.baselines) if args.baselines else BaselineIndex.shipped()
    res = audit(src, args.out, filters=Filters(args.model, args.gpu, args.problem, args.latest), options=opt,
                workers=args.workers, problems_root=args.problems, progress=not args.quiet, baselines=baselines)
    frame = audit_frame(res.records, res.audited)
    tabs = audit_tables(frame, res.records, res.audited, res.skipped)
    paths = write_outputs(res, frame, tabs)
    print(summary(frame, res))
    for name, path in paths.items():
        print(f"  {name}: {path}")
    if not res.records and res.skipped:
        print(f"kb audit: nothing was graded; why, per record: {paths['report'].parent / 'skipped.csv'}", file=sys.stderr)
        return 1
    return 0
