"""Analysis of run records with pandas: fast_p, geometric-mean speedup, correctness, cost, flags.

Every function takes a DataFrame of run records (`to_table(records).to_pandas()`, or
`load_records(path)` for Parquet / JSONL / a dataset folder / the shipped upstream sweep) and
returns a new DataFrame, computed with groupby; nothing loops over rows. Only the columns a
function needs must be present.

The rules that keep the numbers honest:

- Accepted vs correct: `correct` is numeric correctness under the suite's rules (upstream's
  meaning); `accepted` is what counts: every check passed (status "ok"). A record that passed the
  numerics but was rejected for an anomaly flag is correct and not accepted, and so is one graded with checks
  left out (`flag_details.checks_off`: framework ops allowed). Every speedup table,
  fast_p and the cost per kernel count accepted records; `correctness` shows both counts.
  Rows written before schema 1.5 lack `accepted`: it is status == "ok", else `correct`
  (`is_accepted`), which for upstream rows is upstream's `correct`.
- Attempts: every record is an attempt, whatever its status. Repeated (model, gpu, problem)
  triples are kept or reduced by an explicit policy, `dedup(df, "all" | "latest" | "best")`.
- Baseline types: speedups against different baselines (`pytorch`, upstream's older eager-only
  runs; `pytorch_eager`; `torch_compile`) are not comparable, so every speedup table groups by
  `baseline_type` as well: one row per (group, baseline_type), never a mixed figure. The one
  exception is `fast_p_summary` (one row per group, what `kb analyze` shows first): each record
  is judged against its own baseline and the mix is named in `baseline_types`.
  Upstream records a baseline type only on correct records (a failed attempt was never timed),
  so the denominator of fast_p is all attempts of the group (model x gpu by default), and the
  row of each baseline type counts the accepted attempts that beat p x that baseline. The rows
  of one group share that denominator. A group without any accepted record gets a single row
  with a null baseline_type and fast_p 0, so failures never vanish from a table.
- op_type as a group key: upstream fills op_type only on correct records; for grouping, an
  attempt without one takes its problem's most frequent recorded op_type (null if no attempt
  at the problem was ever correct).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

POLICIES = ("all", "latest", "best")
DEFAULT_BY = ("model", "gpu")
DEFAULT_PS = (0.0, 1.0, 1.5, 2.0)
CURVE_PS = tuple(np.round(np.arange(0.0, 4.0001, 0.05), 2))  # p grid of the fast_p curve plots
BT = "baseline_type"


# ---------------------------------------------------------------------------
# Loading

def load_records(source: str | Path | None = None, problems=None) -> pd.DataFrame:
    """Run records as a DataFrame with the RunRecord columns.

    `source`: None (the shipped upstream sweep), an upstream-format .csv, a .parquet or .jsonl
    file, or a folder (every .parquet and .jsonl under it, e.g. a dataset folder).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .importer import import_upstream
    from .schema import RunRecord, SchemaError, to_table

    if source is None or Path(source).suffix == ".csv":
        return frame(to_table(import_upstream(source, problems=problems)))
    from .folders import dataset_files

    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"no records at {path}")
    if not path.is_dir() and not path.is_file():
        raise ValueError(f"{path}: not a file of records (a device or a fifo?)")
    # a folder's files as the audit reads a dataset: regular files inside it, not a link out of it, not hidden
    files = dataset_files(path, (".parquet", ".jsonl")) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"{path}: no .parquet or .jsonl files")
    schema = RunRecord.arrow_schema()
    tables = []
    for f in files:
        if f.suffix == ".parquet":
            t = pq.read_table(f)
            unknown = sorted(set(t.column_names) - set(schema.names))
            if unknown:
                raise SchemaError(f"{f}: column(s) not in the run-record schema: {unknown}")
            cols = [t[n].cast(schema.field(n).type) if n in t.column_names else pa.nulls(len(t), schema.field(n).type)
                    for n in schema.names]
            tables.append(pa.Table.from_arrays(cols, schema=schema))
        elif f.suffix == ".jsonl":
            from .io import read_jsonl

            recs = [RunRecord.from_row(row, where=f"{where}: ") for where, row in read_jsonl(f)]
            tables.append(to_table(recs, RunRecord))
        else:
            raise ValueError(f"{f}: expected .csv, .parquet or .jsonl")
    return frame(pa.concat_tables(tables))


TIME_COLUMNS = ("created_at", "measured_at")


def frame(table) -> pd.DataFrame:
    """A pyarrow table of records as a DataFrame, with its ISO-8601 time columns as UTC timestamps (the Arrow
    schema keeps them as strings, exactly as written) and `accepted` filled where rows predate schema 1.5."""
    df = table.to_pandas()
    for col in TIME_COLUMNS:
        if col in df.columns:
            df[col] = _times(df[col], col)
    if "status" in df.columns or "correct" in df.columns:
        df["accepted"] = is_accepted(df)  # migration on read: shards before schema 1.5 have no accepted column
    return df


def _times(s: pd.Series, name: str) -> pd.Series:
    """ISO-8601 strings as UTC timestamps (one without an offset is UTC); a value that is no time is a SchemaError
    naming it."""
    from .schema import SchemaError

    t = pd.to_datetime(s, utc=True, format="ISO8601", errors="coerce")
    bad = s[t.isna() & s.notna()]
    if len(bad):
        raise SchemaError(f"{name}: {bad.iloc[0]!r} is not an ISO-8601 time ({len(bad)} such row(s))")
    return t


# ---------------------------------------------------------------------------
# Columns derived for analysis (vectorised)

def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(None, index=df.index, dtype=object)


def _bool(s: pd.Series) -> pd.Series:
    return s.astype("boolean").fillna(False).astype(bool)


def is_accepted(df: pd.DataFrame) -> pd.Series:
    """status "ok"; where a row has no status (upstream's): its `accepted`, else `correct`. A record whose
    options left checks out (`flag_details.checks_off`: framework ops allowed, a calibration's) passed only the
    checks that ran, and is no kernel's success here (red team, session 41)."""
    status = _col(df, "status")
    written = _col(df, "accepted").astype("boolean").fillna(_bool(_col(df, "correct")))
    # a status decides where there is one: a Parquet shard's own `accepted` column is not read over it (an incorrect
    # record written as accepted was counted: red team, session 51)
    derived = status.eq("ok").where(status.notna(), written)
    checks_off = _col(df, "flag_details").astype("string").str.contains('"checks_off"', regex=False)
    return _bool(derived) & ~_bool(checks_off)


def is_correct(df: pd.DataFrame) -> pd.Series:
    """Numeric correctness (the `correct` column), whether or not the record was accepted."""
    return _bool(_col(df, "correct"))


def problem_key(df: pd.DataFrame) -> pd.Series:
    return _col(df, "problem_id").fillna(_col(df, "problem"))


def recency(df: pd.DataFrame) -> pd.Series:
    """Sortable time of a record: created_at, else the run_dir's timestamp (run_YYYYMMDD_HHMMSS), else ""."""
    parts = _col(df, "run_dir").astype("string").str.extract(r"^run_(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)$")
    from_run = parts[0] + "-" + parts[1] + "-" + parts[2] + "T" + parts[3] + ":" + parts[4] + ":" + parts[5]
    created = _col(df, "created_at")
    if not pd.api.types.is_datetime64_any_dtype(created):  # as written: compared as text, another offset won
        created = _times(created, "created_at")
    created = created.dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%S")
    return created.astype("string").fillna(from_run).fillna("")


def _op_type(df: pd.DataFrame) -> pd.Series:
    """op_type, with a missing one taken from its problem's most frequent recorded op_type."""
    op = _col(df, "op_type")
    known = pd.DataFrame({"p": problem_key(df), "op": op}).dropna()
    if known.empty:
        return op
    counts = known.value_counts().reset_index(name="n").sort_values(["n", "op"], ascending=[True, False])
    mode = counts.drop_duplicates("p", keep="last").set_index("p")["op"]
    return op.fillna(problem_key(df).map(mode))


def _frame(df: pd.DataFrame, by, extra=()) -> pd.DataFrame:
    """A narrow working frame on a fresh RangeIndex: the group keys plus what a table needs."""
    by = list(by)
    if not by:
        raise ValueError("group by at least one column")
    if BT in by and BT in extra:
        raise ValueError(f"{BT} is always a grouping key of speedup tables; group by the other columns")
    missing = [c for c in by if c not in df.columns]
    if missing:
        raise ValueError(f"no column(s) {', '.join(missing)} to group by; columns: {', '.join(df.columns)}")
    cols = {c: (_op_type(df) if c == "op_type" else df[c]) for c in by}
    cols["_ok"] = is_accepted(df)
    cols.update({"_" + c: _col(df, c) for c in extra})
    return pd.DataFrame({k: v.reset_index(drop=True) for k, v in cols.items()})


def _group(w: pd.DataFrame, keys):
    return w.groupby(list(keys), dropna=False, sort=True, observed=True)


# ---------------------------------------------------------------------------
# Dedup

def dedup(df: pd.DataFrame, policy: str = "latest") -> pd.DataFrame:
    """One record per (model, gpu, problem) triple, or all of them.

    all     every record (repeated triples count as separate attempts)
    latest  the record of the most recent run (created_at, else the run_dir timestamp)
    best    an accepted record if there is one, the fastest of them; when a triple's accepted
            records were timed against different baseline types their speedups are not
            comparable, and the most recent accepted one is kept instead. Triples never
            solved keep their most recent record.
    Ties go to the larger record_id, so the choice does not depend on row order.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown dedup policy {policy!r}; one of {', '.join(POLICIES)}")
    if policy == "all" or df.empty:
        return df
    k = pd.DataFrame({"m": _col(df, "model").to_numpy(), "g": _col(df, "gpu").to_numpy(),
                      "p": problem_key(df).to_numpy(), "t": recency(df).to_numpy(),
                      "id": _col(df, "record_id").fillna("").astype(str).to_numpy()})
    order = ["t", "id"]
    if policy == "best":
        k["ok"] = is_accepted(df).to_numpy()
        bt = pd.Series(_col(df, BT).to_numpy(), index=k.index).where(k["ok"])  # types of the accepted records
        mixed = bt.groupby([k["m"], k["g"], k["p"]], dropna=False).transform("nunique").to_numpy() > 1
        speed = pd.to_numeric(_col(df, "speedup"), errors="coerce").fillna(-np.inf).to_numpy()
        k["score"] = np.where(mixed, k["t"].rank(method="dense").to_numpy(), speed)
        order = ["ok", "score", "t", "id"]
    k = k.sort_values(order, kind="stable")
    keep = np.sort(k.index[~k.duplicated(["m", "g", "p"], keep="last")].to_numpy())
    return df.iloc[keep]


# ---------------------------------------------------------------------------
# Tables

def correctness(df: pd.DataFrame, by=DEFAULT_BY) -> pd.DataFrame:
    """Attempts, compiled, correct (numerically) and accepted counts and rates per group, and a count per status."""
    by = list(by)
    w = _frame(df, by, extra=("compiled", "status"))
    w["_correct"] = is_correct(df).reset_index(drop=True) | w["_ok"]  # accepted implies correct (rows before 1.5)
    w["_compiled"] = _bool(w["_compiled"]) | w["_correct"]
    w["_status"] = w["_status"].astype(object).fillna("unknown")
    g = _group(w, by)
    out = pd.DataFrame({"n_attempts": g.size(), "n_compiled": g["_compiled"].sum(), "n_correct": g["_correct"].sum(),
                        "n_accepted": g["_ok"].sum()})
    out["compile_rate"] = out.n_compiled / out.n_attempts
    out["correct_rate"] = out.n_correct / out.n_attempts
    out["accepted_rate"] = out.n_accepted / out.n_attempts
    status = _group(w, by + ["_status"]).size().unstack("_status", fill_value=0)
    from .schema import STATUSES

    # n_accepted is the "ok" count; one column for each other status present
    status = status[[s for s in STATUSES[1:] + ("unknown",) if s in status.columns]].add_prefix("n_")
    status.columns.name = None
    return out.join(status).reset_index()


def _fast_counts(df: pd.DataFrame, ps, by) -> tuple[pd.DataFrame, list[float]]:
    """Per (group, baseline_type): n_attempts (of the group), n_accepted, and one n_fast column per p."""
    by, ps = list(by), list(dict.fromkeys(float(p) for p in ps))
    w = _frame(df, by, extra=(BT, "speedup"))
    attempts = _group(w, by).size().rename("n_attempts").reset_index()
    ok = w[w["_ok"]]
    speed = pd.to_numeric(ok["_speedup"], errors="coerce").to_numpy(dtype=float)
    hits = pd.DataFrame(speed[:, None] > np.array(ps)[None, :], index=ok.index, columns=ps)  # NaN > p is False
    keys = ok[by].assign(**{BT: ok["_" + BT]})
    g = _group(pd.concat([keys, hits], axis=1), by + [BT])
    fast = g[ps].sum().assign(n_accepted=g.size()).reset_index()
    # Left merge: a group with no accepted record keeps one row, baseline_type null, counts 0.
    out = attempts.merge(fast, on=by, how="left")
    out[["n_accepted"] + ps] = out[["n_accepted"] + ps].fillna(0).astype("int64")
    out = out.sort_values(by + [BT], na_position="last", kind="stable").reset_index(drop=True)
    return out[by + [BT, "n_attempts", "n_accepted"] + ps], ps


def fast_p_curve(df: pd.DataFrame, ps=DEFAULT_PS, by=DEFAULT_BY) -> pd.DataFrame:
    """Long table: one row per (group, baseline_type, p) with n_attempts, n_accepted, n_fast, fast_p.

    fast_p = accepted attempts timed against that baseline type with speedup > p, over ALL
    attempts of the group (see the module doc for why baseline_type splits the numerator).
    """
    by = list(by)
    wide, ps = _fast_counts(df, ps, by)
    long = wide.melt(id_vars=by + [BT, "n_attempts", "n_accepted"], value_vars=ps, var_name="p", value_name="n_fast")
    long["p"] = long["p"].astype(float)
    long["fast_p"] = long["n_fast"] / long["n_attempts"]
    return long.sort_values(by + [BT, "p"], na_position="last", kind="stable").reset_index(drop=True)


def fast_p(df: pd.DataFrame, p: float = 1.0, by=DEFAULT_BY) -> pd.DataFrame:
    """fast_p for one p: one row per (group, baseline_type)."""
    return fast_p_curve(df, [p], by)


def p_label(p: float) -> str:
    return f"fast_{float(p):g}"


def fast_p_table(df: pd.DataFrame, ps=DEFAULT_PS, by=DEFAULT_BY) -> pd.DataFrame:
    """Wide table: one row per (group, baseline_type), a fast_<p> column per p."""
    wide, ps = _fast_counts(df, ps, by)
    for p in ps:
        wide[p] = wide[p] / wide["n_attempts"]
    return wide.rename(columns={p: p_label(p) for p in ps})


def fast_p_summary(df: pd.DataFrame, ps=DEFAULT_PS, by=DEFAULT_BY) -> pd.DataFrame:
    """One row per group: fast_<p> = accepted attempts faster than p x their own baseline, over all attempts, and
    `baseline_types`, what those baselines were ("pytorch_eager 40, torch_compile 12"): the rows of
    `fast_p_table` (one per baseline type) summed, with the mix named instead of hidden."""
    by = list(by)
    wide, ps = _fast_counts(df, ps, by)
    g = _group(wide, by)
    out = g[["n_accepted"] + ps].sum().join(g["n_attempts"].first())
    mix = wide[wide["n_accepted"] > 0]
    names = pd.Series(dtype=object) if mix.empty else _group(mix, by).apply(  # none accepted: apply gives a frame
        lambda t: ", ".join(f"{b} {n}" for b, n in zip(t[BT], t["n_accepted"])), include_groups=False)
    out["baseline_types"] = names.reindex(out.index)
    for p in ps:
        out[p] = out[p] / out["n_attempts"]
    out = out.reset_index()[by + ["baseline_types", "n_attempts", "n_accepted"] + ps]
    return out.rename(columns={p: p_label(p) for p in ps})


def geomean_speedup(df: pd.DataFrame, by=DEFAULT_BY) -> pd.DataFrame:
    """Over accepted records with a speedup, per (group, baseline_type): geometric mean, median, max."""
    by = list(by)
    w = _frame(df, by, extra=(BT, "speedup"))
    w["_speedup"] = pd.to_numeric(w["_speedup"], errors="coerce")
    ok = w[w["_ok"] & (w["_speedup"] > 0)].rename(columns={"_" + BT: BT})
    ok = ok.assign(_log=np.log(ok["_speedup"].to_numpy(dtype=float)))
    g = _group(ok, by + [BT])
    out = pd.DataFrame({"n_accepted": g.size(), "geomean_speedup": np.exp(g["_log"].mean()),
                        "median_speedup": g["_speedup"].median(), "max_speedup": g["_speedup"].max()})
    return out.reset_index()


def cost(df: pd.DataFrame, by=DEFAULT_BY) -> pd.DataFrame:
    """Tokens and USD per accepted kernel.

    Upstream leaves cost empty for some attempts, so each ratio is taken over the attempts whose
    value is known: (sum of known values) / (accepted attempts among them); `n_*_known` says how many.
    """
    by = list(by)
    w = _frame(df, by, extra=("total_tokens", "estimated_cost_usd"))
    cols = {}
    for col, name in (("_total_tokens", "tokens"), ("_estimated_cost_usd", "cost_usd")):
        v = pd.to_numeric(w[col], errors="coerce")
        known = v.notna()
        w["_v"], w["_known"], w["_known_ok"] = v.fillna(0.0), known, known & w["_ok"]
        g = _group(w, by)
        n_known, n_known_ok, total = g["_known"].sum(), g["_known_ok"].sum(), g["_v"].sum()
        cols[f"n_{name}_known"] = n_known
        cols[name] = total.where(n_known > 0)
        cols[f"{name}_per_accepted"] = (total / n_known_ok).where(n_known_ok > 0)
    g = _group(w, by)
    out = pd.DataFrame({"n_attempts": g.size(), "n_accepted": g["_ok"].sum(), **cols})
    return out.reset_index()


def flag_counts(df: pd.DataFrame, by=DEFAULT_BY) -> pd.DataFrame:
    """Per group: attempts, how many were checked for anomalies (flags not null), how many
    carry at least one flag, and a column per flag seen. Upstream records were never checked."""
    by = list(by)
    w = _frame(df, by, extra=("flags",))
    checked = w["_flags"].notna()
    flags = w.loc[checked, "_flags"].explode().dropna()  # one row per (record, flag)
    w["_checked"] = checked
    w["_flagged"] = w.index.isin(flags.index)
    g = _group(w, by)
    out = pd.DataFrame({"n_attempts": g.size(), "n_checked": g["_checked"].sum(), "n_flagged": g["_flagged"].sum()})
    if len(flags):
        per = _group(w.loc[flags.index, by].assign(_flag=flags.to_numpy()), by + ["_flag"]).size()
        per = per.unstack("_flag", fill_value=0)
        per.columns.name = None
        out = out.join(per).fillna({c: 0 for c in per.columns})
        out[list(per.columns)] = out[list(per.columns)].astype("int64")
    return out.reset_index()


def tables(df: pd.DataFrame, by=DEFAULT_BY, ps=DEFAULT_PS) -> dict[str, pd.DataFrame]:
    """Every table of `kb analyze` / `kb report`, in display order (dedup first if you want to)."""
    by = list(by)
    return {
        "correctness": correctness(df, by),
        "correctness_by_level": correctness(df, ["level"]),
        "correctness_by_op_type": correctness(df, ["op_type"]),
        "fast_p": fast_p_summary(df, ps, by),
        "fast_p_by_baseline": fast_p_table(df, ps, by),
        "geomean_speedup": geomean_speedup(df, by),
        "cost_per_accepted": cost(df, by),
        "anomaly_flags": flag_counts(df, by),
    }
