"""`kb analyze`, `kb report` and `kb import-upstream`: the analysis tables as text, CSV, PNG and HTML.

Every number comes from `kb_data.analysis`; this module only formats, plots and writes.
"""
from __future__ import annotations

import base64
import hashlib
import html
import sys
from pathlib import Path

import pandas as pd

from . import analysis as A
from .io import atomic_target, write_bytes_atomic

TITLES = {
    "correctness": "Correct and accepted / total attempts",
    "correctness_by_level": "Correct and accepted / total by level",
    "correctness_by_op_type": "Correct and accepted / total by op_type",
    "fast_p": "fast_p: fraction of all attempts that are accepted and faster than p x their own baseline",
    "fast_p_by_baseline": "fast_p split by baseline type (the rows of one group sum to its fast_p row)",
    "geomean_speedup": "Speedup of accepted records: geometric mean, median, max",
    "cost_per_accepted": "Tokens and cost per accepted kernel",
    "anomaly_flags": "Anomaly flags",
}
NOTES = [
    "Speedups against different baseline types (pytorch: upstream's older eager-only runs; pytorch_eager; "
    "torch_compile) are not comparable: fast_p names the mix of each group's baselines (baseline_types), and every "
    "other speedup table has one row per baseline type and never a mixed figure.",
    "fast_p divides by all attempts of the group (failed attempts carry no baseline type); the rows of one "
    "group share that denominator. A group with no accepted attempt shows one row with an empty baseline type.",
    "correct: the outputs match the reference under the suite's tolerance (upstream's meaning). accepted: every check "
    "passed (status ok); a record rejected by an anti-cheat flag can be correct and not accepted. Speedups, fast_p and "
    "cost count accepted records; for upstream records accepted is upstream's correct. An attempt without an op_type "
    "takes its problem's recorded op_type.",
    "Cost and tokens per accepted kernel are taken over the attempts whose value is known (n_*_known).",
    "Anomaly flags: upstream records were never checked (n_checked 0); records graded by kb-data carry their flags.",
]
ATTRIBUTION = ("Upstream records: the published KernelBench-v3 sweep, CC-BY-4.0. Cite KernelBench-v3 (Arledge, 2026) "
               "and KernelBench (Ouyang et al., 2025).")


# ---------------------------------------------------------------------------
# Computing

def compute(df: pd.DataFrame, by=A.DEFAULT_BY, ps=A.DEFAULT_PS, policy: str = "latest") -> dict:
    """Dedup, then every table and the fast_p curve data the plots use."""
    d = A.dedup(df, policy)
    result = {"n_records": len(df), "sources": _sources(df), "n_used": len(d), "policy": policy, "by": list(by),
              "ps": list(ps), "tables": A.tables(d, by, ps), "frame": d}
    if {"model", "gpu"} <= set(d.columns):
        result["curve"] = A.fast_p_curve(d, A.CURVE_PS, ["model", "gpu"])
    return result


def _sources(df: pd.DataFrame) -> str:
    if "source" not in df.columns:
        return ""
    counts = df["source"].fillna("unknown").value_counts()
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def summary_line(res: dict) -> str:
    return (f"{res['n_records']} records ({res['sources']}); dedup={res['policy']}: "
            f"{res['n_used']} used; grouped by {', '.join(res['by'])}")


# ---------------------------------------------------------------------------
# Plots (matplotlib, Agg)

def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    # labels are the data's (model and GPU names): drawn as text, never parsed as math (a "$\\x$" name ended the
    # report: red team, session 51)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def plot_fast_p_curves(curve: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per GPU; a panel per baseline type, a line per model."""
    plt = _pyplot()
    curve = curve[curve[A.BT].notna()]
    models = sorted(curve["model"].dropna().unique())
    colors = {m: plt.get_cmap("tab20")(i % 20) for i, m in enumerate(models)}
    paths = []
    for gpu, g in curve.groupby("gpu", sort=True):
        types = sorted(g[A.BT].unique())
        fig, axes = plt.subplots(1, len(types), figsize=(5.2 * len(types) + 2.4, 4.2), sharey=True, squeeze=False)
        for ax, bt in zip(axes[0], types):
            for model, m in g[g[A.BT] == bt].groupby("model", sort=True):
                ax.plot(m["p"], m["fast_p"], label=model, color=colors[model], lw=1.4)
            ax.axvline(1.0, color="grey", lw=0.8, ls=":")
            ax.set(title=f"{gpu}, baseline {bt}", xlabel="p (speedup threshold)", xlim=(0, A.CURVE_PS[-1]))
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("fast_p (share of all attempts)")
        handles = {h.get_label(): h for ax in axes[0] for h in ax.get_lines() if not h.get_label().startswith("_")}
        names = sorted(handles)
        fig.legend([handles[n] for n in names], names, loc="center right", fontsize=7, frameon=False)
        fig.tight_layout(rect=(0, 0, 1 - 2.3 / fig.get_figwidth(), 1))
        path = out / f"fast_p_curve_{_slug(gpu)}.png"
        with atomic_target(path) as tmp:
            fig.savefig(tmp, dpi=90, format="png")
        plt.close(fig)
        paths.append(path)
    return paths


def plot_speedup_distributions(df: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per baseline type: a box per model over its accepted records' speedups (log scale)."""
    plt = _pyplot()
    ok = df[A.is_accepted(df) & (pd.to_numeric(df["speedup"], errors="coerce") > 0)]
    paths = []
    for bt, g in ok.groupby(A.BT, sort=True):
        per_model = {m: s.to_numpy(dtype=float) for m, s in g.groupby("model", sort=True)["speedup"]}
        fig, ax = plt.subplots(figsize=(8, 0.32 * len(per_model) + 1.4))
        ax.boxplot(list(per_model.values()), orientation="horizontal",
                   tick_labels=[f"{m} (n={len(v)})" for m, v in per_model.items()], flierprops={"markersize": 3})
        ax.set_xscale("log")
        ax.axvline(1.0, color="grey", lw=0.8, ls=":")
        ax.set(title=f"Speedup of accepted records, baseline {bt}", xlabel="speedup (log scale)")
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
        fig.tight_layout()
        path = out / f"speedup_dist_{_slug(bt)}.png"
        with atomic_target(path) as tmp:
            fig.savefig(tmp, dpi=90, format="png")
        plt.close(fig)
        paths.append(path)
    return paths


SLUG_MAX = 60


def _slug(s: str) -> str:
    """A file name part for a value of the data: the value where it is short and safe, else its safe start and a hash
    (two names one slug would share one plot; a GPU name longer than a file name may be ended the report: red team,
    session 51)."""
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in str(s))
    if slug == str(s) and len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX - 13]}_{hashlib.sha256(str(s).encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


# ---------------------------------------------------------------------------
# Writing

def _fmt(x) -> str:
    return f"{x:.4g}"


def text_report(res: dict) -> str:
    parts = [summary_line(res)]
    with pd.option_context("display.width", 200, "display.max_columns", 50, "display.max_rows", 10_000):
        for name, t in res["tables"].items():
            parts += ["", f"== {name}: {TITLES.get(name, name)}",
                      t.to_string(index=False, na_rep="-", float_format=_fmt)]
    return "\n".join(parts)


def write_files(res: dict, out: Path) -> list[Path]:
    """CSV per table (full precision), the curve data, and the PNG plots."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, t in res["tables"].items():
        with atomic_target(out / f"{name}.csv") as tmp:
            t.to_csv(tmp, index=False)
        paths.append(out / f"{name}.csv")
    if "curve" in res:
        with atomic_target(out / "fast_p_curve.csv") as tmp:
            res["curve"].to_csv(tmp, index=False)
        paths.append(out / "fast_p_curve.csv")
        paths += plot_fast_p_curves(res["curve"], out)
    if {"model", "speedup", A.BT} <= set(res["frame"].columns):
        paths += plot_speedup_distributions(res["frame"], out)
    return paths


def render_html(res: dict, pngs: list[Path]) -> str:
    """A static, self-contained page: the same tables, the plots embedded as data URIs."""
    esc = html.escape
    body = ["<h1>KernelBench run records</h1>", f"<p class=summary>{esc(summary_line(res))}</p>", "<ul class=notes>"]
    body += [f"<li>{esc(n)}</li>" for n in NOTES] + ["</ul>"]
    if "source" in res["frame"].columns and (res["frame"]["source"] == "upstream").any():
        body.append(f"<p class=attribution>{esc(ATTRIBUTION)}</p>")
    for name, t in res["tables"].items():
        body.append(f'<h2 id="{name}">{esc(TITLES.get(name, name))}</h2>')
        keys = list(t.columns[:next((i for i, c in enumerate(t.columns) if c.startswith("n_")), 1)])
        shown = t.astype({k: object for k in keys}).fillna({k: "–" for k in keys}).set_index(keys)
        body.append(shown.to_html(na_rep="", float_format=_fmt, classes="records", table_id=f"table-{name}", border=0))
    if pngs:
        body.append("<h2 id=plots>Plots</h2>")
    for p in pngs:
        data = base64.b64encode(p.read_bytes()).decode("ascii")
        body.append(f'<figure><img alt="{esc(p.stem)}" src="data:image/png;base64,{data}">'
                    f"<figcaption>{esc(p.name)}</figcaption></figure>")
    return html_page("KernelBench run records", body)


def html_page(title: str, body: list[str]) -> str:
    """A static, self-contained page around body fragments (the style every kb report page shares)."""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
table.records {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 12px; }}
table.records th, table.records td {{ padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }}
table.records th {{ background: #f3f3f3; position: sticky; top: 0; }}
table.records tbody th {{ text-align: left; font-weight: normal; vertical-align: top; }}
.notes {{ color: #555; font-size: 13px; }}
figure img {{ max-width: 100%; }}
</style></head>
<body>
{chr(10).join(body)}
</body></html>
"""


# ---------------------------------------------------------------------------
# Commands

def _parse_by(s: str) -> list[str]:
    by = [c.strip() for c in s.split(",") if c.strip()]
    if not by:
        raise ValueError("--by needs at least one column")
    return by


def _parse_ps(s: str) -> list[float]:
    try:
        return [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--p expects comma-separated numbers, got {s!r}") from None


def _compute_from_args(args) -> dict:
    df = A.load_records(args.records, problems=args.problems)
    return compute(df, _parse_by(args.by), _parse_ps(args.p), args.dedup)


def cmd_analyze(args) -> int:
    res = _compute_from_args(args)
    print(text_report(res))
    paths = write_files(res, Path(args.out))
    print(f"\nwrote {len(paths)} files to {args.out}/", file=sys.stderr)
    return 0


def cmd_report(args) -> int:
    res = _compute_from_args(args)
    out = Path(args.out)
    paths = write_files(res, out)
    page = out / "index.html"
    write_bytes_atomic(page, render_html(res, [p for p in paths if p.suffix == ".png"]).encode("utf-8"))
    print(f"wrote {page} ({len(paths)} files alongside)")
    return 0


def cmd_import_upstream(args) -> int:
    import pyarrow.parquet as pq

    from .importer import derived_baselines, import_upstream
    from .schema import Baseline, to_table

    records = import_upstream(args.csv, problems=args.problems)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_target(out) as tmp:
        pq.write_table(to_table(records), tmp)
    print(f"wrote {len(records)} run records to {out}")
    if args.baselines:
        rows = derived_baselines(records)
        with atomic_target(Path(args.baselines)) as tmp:
            pq.write_table(to_table(rows, Baseline), tmp)
        print(f"wrote {len(rows)} derived baselines to {args.baselines}")
    return 0
