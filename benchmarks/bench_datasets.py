"""Time the dataset pipeline against its targets (issue 4):

- build all three datasets from problems/ and the shipped records, and publish them into a local
  store (what `kb build` does): target < 60 s on the 2-core dev machine;
- load the problems dataset at a revision (`store.load`): target < 2 s;
- stream one problem by name (`kb_data.stream.stream_problem`): target < 1 s.

    .venv/bin/python benchmarks/bench_datasets.py            # warm row cache (the usual rebuild)
    .venv/bin/python benchmarks/bench_datasets.py --cold     # also a build with an empty row cache

The store and (with --cold) the row cache are temporary; the warm build uses the normal row
cache (<checkout>/.kb/cache, or $KB_CACHE), filled by the first build on a machine.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"build": 60.0, "load": 2.0, "stream": 1.0}


def _line(what: str, seconds: float, target: float | None, note: str = "") -> str:
    ratio = f"{seconds / target:5.2f} x target ({target:g} s)" if target else ""
    return f"{what:58s} {seconds:8.2f} s  {ratio}  {note}".rstrip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cold", action="store_true", help="also build with an empty problem-row cache")
    ap.add_argument("--problems", type=Path, help="problems root (default: the checkout's)")
    ap.add_argument("--name", default="23_Softmax", help="problem to stream (default 23_Softmax)")
    ap.add_argument("--exclude", action="append", default=[],
                    help="leave out problem files (ids like v0.1/level4/6_x) that do not build yet; reported")
    args = ap.parse_args(argv)

    print(f"# machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}")
    t = time.perf_counter()
    import datasets  # noqa: F401  (imported up front: the targets are about the work, not the imports)
    import torch  # noqa: F401

    from kb_data.builders.problems import default_cache_dir
    from kb_data.dataset_cli import build_datasets, publish_results
    from kb_data.stores import open_store
    from kb_data.stream import stream_problem

    print(_line("imports (torch, datasets, kb_data)", time.perf_counter() - t, None))
    results = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        tmp = Path(tmp)
        problems_root = args.problems
        if args.exclude:  # a copy of the problems without the excluded files (the upstream import uses the full set)
            import shutil

            src = args.problems or ROOT / "problems"
            problems_root = tmp / "problems"
            shutil.copytree(src, problems_root, ignore=shutil.ignore_patterns("__pycache__"))
            for pid in args.exclude:
                (problems_root / f"{pid}.py").unlink()
            print(f"# excluded (do not build yet): {', '.join(args.exclude)}")
        runs = [("cold", tmp / "cache")] if args.cold else []
        runs.append(("warm", default_cache_dir()))
        store = None
        for label, cache in runs:
            n_cached = len(list((cache / "problem_rows").glob("*.json"))) if (cache / "problem_rows").is_dir() else 0
            store = open_store("local", root=tmp / f"store-{label}")
            t = time.perf_counter()
            built = build_datasets("problems", tmp / f"out-{label}", problems_root=problems_root, cache=cache,
                                   log=lambda m: None)
            built += build_datasets({"runs", "baselines"}, tmp / f"out-{label}", problems_root=args.problems,
                                    log=lambda m: None)
            published = publish_results(store, built)
            dt = time.perf_counter() - t
            counts = ", ".join(f"{r.dataset.replace('kernelbench-v3-', '')}{' ' + r.suite if r.suite else ''}={r.rows}"
                               for r in built)
            results.append(("build", dt))
            print(_line(f"build + publish all three ({label} row cache: {n_cached} rows before)", dt, TARGETS["build"],
                        counts))
            for res, pub in published:
                print(f"    {res.dataset}{' ' + res.suite if res.suite else ''}: {pub.commit[:12]}"
                      + (f" tag {pub.tag}" if pub.tag else ""))

        t = time.perf_counter()
        ds, rev = store.load("kernelbench-v3-problems", "v3")
        dt = time.perf_counter() - t
        n = sum(len(s) for s in ds.values())
        print(_line("load problems @ v3, first time (prepares the cache)", dt, TARGETS["load"], f"{n} rows"))
        t = time.perf_counter()
        ds, rev = store.load("kernelbench-v3-problems", "v0.1")
        dt = time.perf_counter() - t
        print(_line("load problems @ v0.1, first time", dt, TARGETS["load"], f"{sum(len(s) for s in ds.values())} rows"))
        t = time.perf_counter()
        store.load("kernelbench-v3-problems", "v3")
        print(_line("load problems @ v3, again", time.perf_counter() - t, TARGETS["load"]))

        for rev_name in ("v3", "v0.1"):
            t = time.perf_counter()
            hit = stream_problem(args.name, rev_name, store=store)
            print(_line(f"stream {args.name} @ {rev_name} (in process)", time.perf_counter() - t, TARGETS["stream"],
                        hit.problem_id))
        code = (f"import time; t=time.perf_counter(); from kb_data.stream import stream_problem; "
                f"from kb_data.stores import open_store; "
                f"h=stream_problem({args.name!r}, 'v3', store=open_store('local', root={str(store.root)!r})); "
                f"print(time.perf_counter()-t)")
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
        wall = time.perf_counter() - t
        print(_line(f"stream {args.name} @ v3 (fresh process, incl. imports)", float(out.stdout.strip().splitlines()[-1]),
                    None, f"process wall {wall:.2f} s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
