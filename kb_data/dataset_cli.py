"""`kb build`, `kb publish`, `kb pull`, `kb revisions`: the dataset commands (parser entries in cli.py).

`kb build` with no arguments is the README's main command: it builds the three datasets from
`problems/` (v0.1, then v3) and the shipped records, then publishes them into the local store
(problems tagged `v0.1` and `v3`; `main` = v3) and prints counts and revision ids. Everything is
built and checked before anything is published, so a broken problem file or a malformed record
leaves the store as it was.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from kb_data.schema import SUITES


def _store(args):
    from .stores import open_store

    if getattr(args, "store", "local") == "hub":
        return open_store("hub", org=getattr(args, "org", None), private=getattr(args, "private", False))
    return open_store("local", root=getattr(args, "store_root", None))


def _name(args, dataset: str) -> str:
    from kb_data.builders.common import dataset_name

    return getattr(args, "repo", None) or dataset_name(dataset)


def read_records(path: str | Path) -> list[dict]:
    """Run-record rows from a .jsonl file (one `RunRecord.to_row()` per line, as `kb eval --out` appends them),
    a .parquet file or a dataset folder."""
    import pyarrow.dataset as pds

    from .io import read_jsonl_rows

    path = Path(path)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*.parquet") if not any(x.startswith(".") for x in p.parts))
        if not files:
            raise FileNotFoundError(f"{path}: no Parquet files")
        return pds.dataset(files, format="parquet").to_table().to_pylist()
    if path.suffix == ".parquet":
        return pds.dataset(str(path), format="parquet").to_table().to_pylist()
    return read_jsonl_rows(path)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _progress(what: str, log, every: float = 10.0):
    """A progress callback that logs at most every `every` seconds (cold builds analyse for minutes)."""
    state = {"n": 0, "t0": time.perf_counter(), "last": time.perf_counter()}

    def tick(pid: str) -> None:
        state["n"] += 1
        now = time.perf_counter()
        if now - state["last"] >= every:
            state["last"] = now
            log(f"{what}: analysed {state['n']} problem(s) so far ({now - state['t0']:.0f} s; last {pid})")
    return tick


def build_datasets(what: str, out: Path, *, suites=SUITES, problems_root=None, records_files=(), baseline_files=(),
                   workers=None, cache=True, upstream=True, log=_log) -> list:
    """Build the asked datasets into `out/<name>[/<suite>]`; returns BuildResults (problems: one per suite).

    `what`: "all", one of problems/baselines/runs, or a collection of them.
    """
    from kb_data.builders import baselines as bb, problems as pb, runs as rb
    from kb_data.builders.common import BASELINES, PROBLEMS, RUNS

    wanted = {"problems", "baselines", "runs"} if what == "all" else {what} if isinstance(what, str) else set(what)

    results = []
    if "problems" in wanted:
        for suite in suites:
            t = time.perf_counter()
            res = pb.build_problems(out / PROBLEMS / suite, suite, problems_root, workers=workers, cache=cache,
                                    progress=_progress(f"problems {suite}", log))
            log(f"built {res.summary()} in {time.perf_counter() - t:.1f} s")
            results.append(res)
    records = []
    if wanted & {"runs", "baselines"} and upstream:
        t = time.perf_counter()
        records = rb.shipped_runs(problems_root)
        log(f"imported {len(records)} upstream run records in {time.perf_counter() - t:.1f} s")
    if "runs" in wanted:
        extra = []
        for f in records_files:
            extra += [(f"{f}: row {i}", r) for i, r in enumerate(read_records(f))]
        res = rb.build_runs(list(records) + extra, out / RUNS)
        log(f"built {res.summary()}")
        results.append(res)
    if "baselines" in wanted:
        measured = []
        for f in baseline_files:
            measured += bb.read_baseline_jsonl(f)
        res = bb.build_baselines(bb.shipped_baselines(records) + measured, out / BASELINES)
        log(f"built {res.summary()}")
        results.append(res)
    return results


def publish_results(store, results, *, tag: str | None = None, names: dict | None = None) -> list:
    """Publish built folders: problems tagged with their suite (or `tag`), the others with `tag` if given.

    Every tag is checked before the first publish, so a tag conflict publishes nothing.
    `names` maps a dataset name to the name (repo id) to publish under.
    """
    from kb_data.builders.common import PROBLEMS, RUNS

    plan = []
    for res in results:
        t = tag or (res.suite if res.dataset == PROBLEMS else None)
        plan.append((res, (names or {}).get(res.dataset, res.dataset), t))
    for res, name, t in plan:
        if t and res.dataset != RUNS:  # runs are appended: append_runs checks
            store.check_tag(name, res.folder, t)
    from kb_data.builders.publish import publish_folder

    out = []
    for res, name, t in plan:
        pub = publish_folder(store, name, res.folder, tag=t,
                             message=f"kb: {res.dataset}" + (f" {res.suite}" if res.suite else ""))
        out.append((res, pub))
    return out


def cmd_build(args) -> int:
    t0 = time.perf_counter()
    suites = args.suite or list(SUITES)
    kwargs = dict(suites=suites, problems_root=args.problems, records_files=args.records or (),
                  baseline_files=args.baselines or (), workers=args.workers, cache=not args.no_cache,
                  upstream=not args.no_upstream)
    if args.out and not args.publish:
        results = build_datasets(args.what, Path(args.out), **kwargs)
        for res in results:
            print(f"{res.summary()}\n  -> {res.folder}")
        print(f"built in {time.perf_counter() - t0:.1f} s (not published; add --publish to publish into the store)")
        return 0
    store = _store(args)
    with tempfile.TemporaryDirectory(prefix="kb-build-") as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        results = build_datasets(args.what, out, **kwargs)
        published = publish_results(store, results)
    for res, pub in published:
        print(_published_line(res, pub))
    where = getattr(store, "root", None) or getattr(store, "api", None) and store.api.endpoint
    for name in sorted({res.dataset for res, _ in published}):
        revs = store.revisions(name)
        print(f"{name}: main = {revs['branches'].get('main', '-')}"
              + "".join(f", {t} = {c}" for t, c in sorted(revs["tags"].items())))
    print(f"store: {where} ({store.kind}); {time.perf_counter() - t0:.1f} s")
    return 0


def _published_line(res, pub) -> str:
    rows = f"{res.rows} rows"
    if pub.rows_added is not None:
        rows = f"{res.rows} records ({pub.rows_added} new, {pub.rows_present} already published)"
    tag = f" tag {pub.tag}" if pub.tag else ""
    state = "new commit" if pub.created else "unchanged"
    suite = f" {res.suite}" if res.suite else ""
    if not pub.commit:
        return f"{res.dataset}{suite}: {rows} -> nothing to publish"
    return f"{res.dataset}{suite}: {rows} -> {pub.commit[:12]}{tag} ({state})"


def cmd_publish(args) -> int:
    from kb_data.builders.common import dataset_kind, dataset_name

    kind = dataset_kind(args.dataset)
    store = _store(args)
    name = _name(args, kind)
    if args.folder:
        if kind == "problems" and not args.tag:
            raise ValueError("publishing a problems folder needs --tag (the suite version, e.g. v3)")
        from kb_data.builders.publish import publish_folder

        pub = publish_folder(store, name, args.folder, tag=args.tag, message=args.message)
        print(pub.summary())
        return 0
    suites = args.suite or list(SUITES)
    if args.tag and kind == "problems" and len(suites) != 1:
        raise ValueError("--tag with problems needs one --suite")
    with tempfile.TemporaryDirectory(prefix="kb-publish-") as tmp:
        results = build_datasets(kind, Path(tmp), suites=suites, problems_root=args.problems,
                                 records_files=args.records or (), baseline_files=args.baselines or (),
                                 workers=args.workers, cache=not args.no_cache, upstream=not args.no_upstream)
        for res, pub in publish_results(store, results, tag=args.tag, names={dataset_name(kind): name}):
            print(_published_line(res, pub))
    return 0


def cmd_pull(args) -> int:
    import pyarrow.parquet as pq

    from kb_data.builders.common import card_configs, folder_files

    store = _store(args)
    name = _name(args, args.dataset)
    rev = store.resolve(name, args.revision)
    folder = store.snapshot(name, rev)
    if args.out:
        out = Path(args.out)
        if out.exists() and any(out.iterdir()):
            raise FileExistsError(f"{out} is not empty")
        out.mkdir(parents=True, exist_ok=True)
        for rel in folder_files(folder):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / rel, out / rel)
        folder = out
    print(f"{name} @ {args.revision} = {rev}")
    print(f"folder: {folder}")
    files = folder_files(folder)
    from kb_data.builders.common import match_files

    for spec in card_configs((folder / "README.md").read_text(encoding="utf-8")):
        counts = []
        for split, patterns in spec.splits.items():
            n = sum(pq.ParquetFile(folder / f).metadata.num_rows for f in match_files(patterns, files))
            counts.append(f"{split}={n}")
        print(f"  config {spec.name}{' (default)' if spec.default else ''}: " + " ".join(counts))
    return 0


def cmd_revisions(args) -> int:
    store = _store(args)
    name = _name(args, args.dataset)
    revs = store.revisions(name)
    for kind in ("branches", "tags"):
        for ref, commit in sorted(revs[kind].items()):
            print(f"{kind[:-1] if kind == 'tags' else 'branch'}\t{ref}\t{commit}")
    return 0


def add_store_args(p) -> None:
    """Options shared by publish/pull/revisions (and build's publishing)."""
    p.add_argument("--store", choices=("local", "hub"), default="local", help="where (default: the local store)")
    p.add_argument("--store-root", type=Path, help="local store root (default: $KB_STORE, else <checkout>/.kb/store)")
    p.add_argument("--repo", help="hub: the dataset repo id org/name (default: <org>/<dataset name>)")
    p.add_argument("--org", help="hub: namespace for the default repo ids (default: the token's user)")


def cmd_migrate(args) -> int:
    from kb_data.builders.runs import migrate_runs
    from kb_data.schema import SCHEMA_VERSION

    store = _store(args)
    name = _name(args, args.dataset)
    res = migrate_runs(store, name)
    if res is None:
        print(f"{name}: every shard already has the schema {SCHEMA_VERSION}; nothing to do")
    else:
        print(f"{name}: {res.rows_present} record(s) rewritten in schema {SCHEMA_VERSION} -> {res.commit[:12]}")
    return 0
