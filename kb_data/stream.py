"""The harness's entry point: ONE problem at a pinned revision, without loading the whole dataset.

    hit = stream_problem("23_Softmax", revision="v3")                  # local store (default)
    hit = stream_problem("v3/level1/23_Softmax", revision="v3", store=open_store("hub", org="my-org"))
    hit.problem          # kb_data.problems.LoadedProblem (module executed from the row's code)
    hit.row              # the full Problem row: rules, inputs, flops, ...
    hit.revision         # the immutable id the grade is against (store it in the run record)

The ref may be a problem id (`v3/level1/23_Softmax`), `category/name`, a name, or a file name
with `.py`. Only the revision's Parquet files of the `all` config are scanned, with a pyarrow
filter (locally, or through `HfFileSystem` at the resolved SHA: ranged reads, no snapshot).
A ref that matches nothing is an error that suggests the nearest names; one that matches several
problems (v3 reuses names across categories) is an error that lists their ids.
"""
from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass

from .store import DEFAULT_BRANCH, Store
from .stores import open_store

PROBLEMS_DATASET = "kernelbench-v3-problems"
ALL_CONFIG = "all"


class ProblemNotFound(LookupError, ValueError):
    """No problem (or more than one) matches the ref at that revision."""


@dataclass
class StreamedProblem:
    problem: object        # kb_data.problems.LoadedProblem
    row: dict
    revision: str
    dataset: str
    store: str

    @property
    def problem_id(self) -> str:
        return self.row["problem_id"]

    @property
    def rules(self) -> dict:
        return self.row["rules"]


def _filter_for(ref: str):
    import pyarrow.compute as pc

    ref = ref[:-3] if ref.endswith(".py") else ref
    parts = ref.split("/")
    if len(parts) == 3:
        return pc.field("problem_id") == ref
    if len(parts) == 2:
        return (pc.field("category") == parts[0]) & (pc.field("name") == parts[1])
    return pc.field("name") == ref


def find_rows(ref: str, revision: str = DEFAULT_BRANCH, *, store: Store | str | None = None,
              dataset: str = PROBLEMS_DATASET, suite: str | None = None) -> tuple[list[dict], str, Store]:
    """All rows matching `ref` at the revision (usually one), and the resolved revision id."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pds

    st = store if isinstance(store, Store) else open_store(store or "local")
    src = st.parquet_source(dataset, revision, config=ALL_CONFIG)
    ds = pds.dataset(src.paths, format="parquet", filesystem=src.filesystem)
    flt = _filter_for(ref)
    if suite is not None:
        flt = flt & (pc.field("suite") == suite)
    rows = ds.to_table(filter=flt).to_pylist()
    if not rows:
        ids = ds.to_table(columns=["problem_id", "name"]).to_pylist()
        names = {r["name"]: r["problem_id"] for r in ids}
        bare = ref[:-3] if ref.endswith(".py") else ref
        close = difflib.get_close_matches(bare, list(names) + [r["problem_id"] for r in ids], n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(names.get(c, c) for c in close)}?" if close else ""
        raise ProblemNotFound(f"no problem {ref!r} in {st.describe(dataset)} at revision {revision!r} "
                              f"({src.revision[:12]}){hint}")
    return rows, src.revision, st


def stream_problem(ref: str, revision: str = DEFAULT_BRANCH, *, store: Store | str | None = None,
                   dataset: str = PROBLEMS_DATASET, suite: str | None = None) -> StreamedProblem:
    """One problem by name or id at `revision` of a store ('local', 'hub' or a Store; default local)."""
    from .problems import load_source

    rows, rev, st = find_rows(ref, revision, store=store, dataset=dataset, suite=suite)
    if len(rows) > 1:
        raise ProblemNotFound(f"{ref!r} is ambiguous at revision {revision!r}: "
                              f"{', '.join(sorted(r['problem_id'] for r in rows))}; give the problem id")
    row = rows[0]
    if hashlib.sha256(row["code"].encode("utf-8")).hexdigest() != row["sha256"]:
        raise ValueError(f"{row['problem_id']} at {rev[:12]}: code does not match its sha256; the data is damaged")
    problem = load_source(row["code"], row["problem_id"])
    problem.pinned_rules = row.get("rules") or None  # pinning a revision pins its grading rules
    return StreamedProblem(problem, row, rev, dataset, st.kind)
