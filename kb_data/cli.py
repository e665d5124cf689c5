"""The `kb` command line."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from .paths import DATA_DIR
from .schema import SUITES


def _add_sandbox(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sandbox", default="auto", choices=["auto", "strict", "strong", "process", "none"],
                   help="isolation of the submission's process (SECURITY.md): auto, the strongest available; strict, "
                   "refuse to run below strong; none, explicit and loud")


def _add_problems_root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--problems", type=Path, default=None, help="problems root (default: the checkout's problems/)")


def cmd_ls(args) -> int:
    from .problems import ProblemSet, source_constants
    from .targets import gpus_for

    ps = ProblemSet(args.problems)
    ids = ps.ids(args.suite, args.category)
    if args.category and not ids:
        known = sorted({pid.split("/")[1] for pid in ps.ids(args.suite)})
        raise ValueError(f"no category {args.category!r}{' in suite ' + args.suite if args.suite else ''}; "
                         f"known: {', '.join(known)}")
    if args.fits:
        from .grading_cli import _available_bytes, _memory_needs
    need = _memory_needs(ids, ps) if args.fits else {}
    avail = _available_bytes() if args.fits else 0
    n = 0
    for pid in ids:
        gpus = gpus_for(pid)
        if args.gpu and args.gpu not in gpus and not (pid.startswith("v0.1/") and args.gpu != "M4MAX"):
            continue
        if args.fits and (need.get(pid) is None or need[pid] > avail):
            continue
        if args.ids_only:
            print(pid)
        else:
            code = ps.paths[pid].read_text(encoding="utf-8")
            facts = source_constants(code, ("OP_TYPE", "KNOWN_ISSUE", "REQUIRES"))
            print(f"{pid}\tlevel={_level(pid)}\top_type={facts.get('OP_TYPE') or '-'}\tgpus={','.join(gpus) or 'any'}"
                  + (f"\tcpu_need={need[pid] / 1e9:.2f}GB" if args.fits else "")
                  + ("\tknown_issue" if facts.get("KNOWN_ISSUE") else "")
                  + (f"\trequires={','.join(facts['REQUIRES'])}" if facts.get("REQUIRES") else ""))
        n += 1
    fits = f" that fit this machine's {avail / 1e9:.1f} GB available on the CPU" if args.fits else ""
    print(f"# {n} problems{fits}", file=sys.stderr)
    return 0


def _level(pid: str) -> int:
    from .problems import level_of

    return level_of(pid.split("/")[1])


def cmd_validate(args) -> int:
    from .problems import ProblemSet, validate_path

    ps = ProblemSet(args.problems)
    ids = ps.ids(args.suite, args.category)
    counts: dict[str, int] = {}
    failures = []
    for pid in ids:
        v = validate_path(ps.paths[pid], ps.root)
        counts[v.status] = counts.get(v.status, 0) + 1
        if v.status != "ok" or args.verbose:
            print(f"{v.status:12s} {pid}" + (f": {v.message}" if v.message else ""))
        if v.status == "failed":
            failures.append(v)
    summary = ", ".join(f"{k} {counts[k]}" for k in sorted(counts))
    print(f"validated {len(ids)} problems: {summary}")
    if failures:
        print(f"{len(failures)} problem(s) failed:", file=sys.stderr)
        for v in failures:
            print(f"  {v.problem_id}: {v.message}", file=sys.stderr)
        return 1
    return 0


def cmd_serve(args) -> int:
    import signal
    import threading

    from .paths import work_dir
    from .serve import StoreServer, client_env
    from .store import LocalStore

    pidfile = work_dir() / f"serve-{args.port}.pid"
    if args.stop:
        if not pidfile.exists():
            raise ValueError(f"no `kb serve --background` on port {args.port} (no {pidfile})")
        os.kill(int(pidfile.read_text()), signal.SIGTERM)
        pidfile.unlink()
        print(f"stopped kb serve on port {args.port}")
        return 0
    store = LocalStore(args.store_root)
    srv = StoreServer(store, port=args.port, org=args.org, writable=args.writable, token=args.token)
    held = ", ".join(store.datasets()) or "nothing yet (run `kb build`)"
    print(f"serving {store.root} ({held}) at {srv.url}{' (writable)' if args.writable else ''}")
    print("point the clients at it: " + " ".join(f"{k}={v}" for k, v in client_env(srv.url).items()), flush=True)
    if args.background:  # the socket listens before the fork, so a client started right after cannot miss it
        pid = os.fork()
        if pid:
            from .io import write_bytes_atomic

            write_bytes_atomic(pidfile, str(pid).encode())
            print(f"in the background as pid {pid}; stop it with `kb serve --stop --port {args.port}`")
            return 0
        os.setsid()
        sys.stdin.close()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with srv:
        try:
            threading.Event().wait()
        except (KeyboardInterrupt, SystemExit):
            pass
    if args.background:
        os._exit(0)
    return 0


def _grading(cmd: str):
    """A grading command's handler, imported when it runs (kb_data.grading_cli)."""
    return lambda a: getattr(importlib.import_module(".grading_cli", __package__), cmd)(a)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="kb", description="KernelBench problems, baselines and run records as datasets; kernel grading.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("ls", help="list problems: one id per row with its key facts")
    _add_problems_root(p)
    p.add_argument("--suite", choices=SUITES)
    p.add_argument("--category")
    p.add_argument("--gpu", help="only problems swept on this GPU key (v0.1 problems run on any NVIDIA GPU)")
    p.add_argument("--fits", action="store_true",
                   help="only problems this machine's available memory can grade on the CPU, with what each needs")
    p.add_argument("--ids-only", action="store_true")
    p.set_defaults(func=cmd_ls)

    p = sub.add_parser("validate", help="load and meta-run every problem; exit 1 listing failures")
    _add_problems_root(p)
    p.add_argument("--suite", choices=SUITES)
    p.add_argument("--category")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("eval", help="grade a submission (or a batch) on the local GPU, CPU when there is none")
    _add_problems_root(p)
    p.add_argument("problem", nargs="?", help="problem id, name or file name")
    p.add_argument("submission", nargs="?", type=Path, help="the submission .py file")
    p.add_argument("--batch", type=Path, help="a folder of <problem>.py or <problem>/solution.py files, or a JSONL manifest")
    p.add_argument("--suite", choices=SUITES)
    p.add_argument("--gpu", help="GPU key to record (default: from the device name)")
    p.add_argument("--device", help="cuda:N or cpu (default: cuda:0 when there is a GPU)")
    p.add_argument("--model", default="local", help="who wrote the submission (the record's model column)")
    p.add_argument("--out", type=Path, help="single: append the run record to this JSONL file (what `kb publish runs "
                   "--records` takes; a measured baseline goes to <name>.baselines.jsonl beside it); "
                   "batch: output folder (default kb-eval-out)")
    p.add_argument("--json", action="store_true", help="single: print the run record as one JSON line")
    p.add_argument("--ignore-memory", action="store_true",
                   help="grade on the CPU even when the problem looks too large for this machine's memory")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission")
    p.add_argument("--trials", type=int, help="timed calls (default: the suite's rules)")
    p.add_argument("--warmup", type=int)
    p.add_argument("--allow-framework", action="store_true",
                   help="do not require a custom kernel (grading the reference itself, or framework-only baselines)")
    p.add_argument("--baselines", type=Path, action="append", default=[],
                   help="baseline JSONL files to look up (default: the shipped measured baselines)")
    p.add_argument("--measure-baseline", action="store_true", help="measure the baseline even when one is known")
    p.add_argument("--no-pair", action="store_true",
                   help="speedup against the stored baseline, not the reference (eager, or compiled on a GPU where the "
                   "baseline is torch.compile) timed beside the submission")
    p.add_argument("--revision", help="grade against the problem at this revision of the problems dataset "
                                     "(streamed from --store) instead of the local problems/ files")
    p.add_argument("--store", choices=["local", "hub"], default="local")
    p.add_argument("--org", help="Hub organisation of the datasets (with --store hub)")
    p.add_argument("--workers", default="auto", help="batch: 'auto' (one per visible GPU) or a number (more than one "
                   "per GPU only take turns on it: BENCHMARKS.md)")
    p.add_argument("--fresh-judge", action="store_true",
                   help="batch: a fresh judge process for every submission (by default a device's judge stays up "
                   "while it grades one problem's submissions, and prepares the reference once)")
    p.add_argument("--ray", action="store_true", help="batch: run the jobs as Ray tasks")
    p.add_argument("--address", help="Ray cluster address")
    _add_sandbox(p)
    p.add_argument("--memory-limit-gb", type=float, help="host memory of the submission's processes (default: sized "
                   "by the problem); an overrun ends as status memory_exceeded")
    p.set_defaults(func=_grading("cmd_eval"))

    p = sub.add_parser("calibrate", help="grade the references as their own submissions: does a speedup mean anything "
                       "here? (exit 1 listing every record off its expectation)")
    _add_problems_root(p)
    p.add_argument("--suite", action="append", choices=SUITES, help="suite(s) to calibrate (default: all)")
    p.add_argument("--category", action="append")
    p.add_argument("--only", action="append", default=[], help="problem ids or names (comma-separated or repeated)")
    p.add_argument("--variants", default="eager,compiled", help="eager (the reference as it is) and/or compiled (as the "
                   "paired reference is compiled; GPU only)")
    p.add_argument("--out", type=Path, default=Path("kb-calibration"), help="folder: submissions, records (resumable), "
                   "calibration.json")
    p.add_argument("--device", help="cuda:N or cpu (default: cuda:0 when there is a GPU)")
    p.add_argument("--gpu", help="GPU key to record (default: from the device name)")
    p.add_argument("--workers", default="auto", help="'auto' (one per visible GPU) or a number")
    p.add_argument("--trials", type=int, help="timed calls (default: the suite's rules)")
    p.add_argument("--warmup", type=int)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per grade")
    _add_sandbox(p)
    p.add_argument("--baselines", type=Path, action="append", default=[],
                   help="baseline JSONL files to look up (default: the shipped measured baselines)")
    p.set_defaults(func=_grading("cmd_calibrate"))

    p = sub.add_parser("baselines", help="baseline timings of the references")
    bsub = p.add_subparsers(dest="baselines_cmd", required=True)
    p = bsub.add_parser("measure", help="time every reference eagerly and under torch.compile; resumable")
    _add_problems_root(p)
    p.add_argument("--suite", action="append", choices=SUITES, help="suite(s) to measure (default: all)")
    p.add_argument("--category", action="append")
    p.add_argument("--only", action="append", default=[], help="problem ids or names (comma-separated or repeated)")
    p.add_argument("--gpu-key", help="GPU key for the rows (default: from the device name)")
    p.add_argument("--device", default="auto",
                   help="cuda:N, a comma-separated list, or auto (every visible GPU, else the CPU): each GPU times its "
                        "share, one problem at a time")
    p.add_argument("--out", type=Path, default=Path("baselines.jsonl"), help="JSONL file the rows are appended to")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2), help="parallel compile processes")
    p.add_argument("--compile-suites", default="v3,v0.1", help="suites whose references are also timed under torch.compile")
    p.add_argument("--max-seconds", type=float, help="stop starting new problems after this long (re-run resumes)")
    p.add_argument("--chunk", type=int, default=8, help="problems per isolated child")
    p.add_argument("--compile-budget", type=float, default=300, help="seconds for the parallel compile phase")
    p.set_defaults(func=_grading("cmd_baselines_measure"))
    p = bsub.add_parser("spread", help="run-to-run spread between two measurements of the same baselines")
    p.add_argument("first", type=Path, help="baseline JSONL (e.g. the shipped rows)")
    p.add_argument("second", type=Path, help="baseline JSONL measured again (e.g. `measure --only ...` in a later call)")
    p.add_argument("--min-ms", type=float, default=0.1, help="summarise problems whose first median is over this")
    p.set_defaults(func=_grading("cmd_baselines_spread"))
    p = bsub.add_parser("ship", help="merge `measure` output into the package's shipped rows (one row per problem and timing method)")
    p.add_argument("files", nargs="+", type=Path, help="JSONL files written by `kb baselines measure` (later ones win)")
    p.add_argument("--gpu-key", required=True, help="the rows' GPU key, e.g. H200")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR)
    p.set_defaults(func=_grading("cmd_baselines_ship"))

    # Run records: the commands live in kb_data.report, imported on use (pandas and matplotlib load slowly).
    for name, default_out, help_ in (("analyze", "kb-analysis", "tables of run records (printed, CSV) and PNG plots"),
                                     ("report", "kb-report", "a static HTML page with the analysis tables and plots")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("records", nargs="?", help="a .parquet/.jsonl file, a dataset folder or an upstream-format .csv "
                                                  "(default: the shipped KernelBench-v3 sweep)")
        p.add_argument("--by", default="model,gpu", help="group columns, comma-separated (default model,gpu)")
        p.add_argument("--dedup", choices=("all", "latest", "best"), default="latest",
                       help="repeated (model, gpu, problem) triples: every record, the latest run's, or the best (default latest)")
        p.add_argument("--p", default="0,1,1.5,2", help="fast_p thresholds, comma-separated (default 0,1,1.5,2)")
        p.add_argument("--out", default=default_out, help=f"output folder (default {default_out})")
        _add_problems_root(p)
        p.set_defaults(func=lambda a: getattr(importlib.import_module(".report", __package__), "cmd_" + a.cmd)(a))

    # Audit: re-grade a published runs dataset here (kb_data.audit, kb_data.audit_report, imported on use).
    p = sub.add_parser("audit", help="re-grade the solutions of a runs dataset on this machine; what changed")
    p.add_argument("source", help="a runs dataset: a dataset folder, a local store name (runs), or a Hub repo id (org/name)")
    p.add_argument("--revision", help="tag, branch or commit of a store or Hub dataset (default main; resolved to its commit)")
    p.add_argument("--store", choices=("auto", "folder", "local", "hub"), default="auto",
                   help="where SOURCE is (default: a folder if it exists, the Hub for org/name, else the local store)")
    p.add_argument("--store-root", type=Path, help="local store root (default: $KB_STORE, else <checkout>/.kb/store)")
    p.add_argument("--org", help="hub: namespace for a SOURCE without one")
    p.add_argument("--out", type=Path, default=Path("kb-audit-out"), help="output folder; a rerun resumes (default kb-audit-out)")
    p.add_argument("--model", action="append", default=[], help="only these models (repeatable)")
    p.add_argument("--gpu", action="append", default=[], help="only records published for these GPUs (repeatable)")
    p.add_argument("--problem", action="append", default=[], help="only these problems: id, name or file name (repeatable)")
    p.add_argument("--latest", action="store_true", help="only the latest record per (model, GPU, problem)")
    p.add_argument("--workers", default="auto", help="'auto' (one per visible GPU, else the CPU) or a number")
    p.add_argument("--gpu-key", help="GPU key to record (default: from the device name)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per submission")
    p.add_argument("--trials", type=int, help="timed calls (default: the suite's rules)")
    p.add_argument("--warmup", type=int)
    p.add_argument("--no-pair", action="store_true", help="speedups against the stored baseline (see kb eval --no-pair)")
    p.add_argument("--baselines", type=Path, action="append", default=[], help="baseline JSONL files (default: shipped)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _add_problems_root(p)
    p.set_defaults(func=lambda a: importlib.import_module(".audit_report", __package__).cmd_audit(a))

    p = sub.add_parser("import-upstream", help="the published KernelBench-v3 sweep as run records (Parquet)")
    p.add_argument("--out", default="kernelbench_v3_runs.parquet", help="Parquet file to write")
    p.add_argument("--csv", help="an upstream-format CSV instead of the shipped, hash-checked copy")
    p.add_argument("--baselines", help="also write the derived baselines (median ref_ms) to this Parquet file")
    _add_problems_root(p)
    p.set_defaults(func=lambda a: importlib.import_module(".report", __package__).cmd_import_upstream(a))

    # Datasets: build, publish, pull (kb_data.dataset_cli; the local store is the default).
    def _ds(cmd):
        return lambda a: getattr(importlib.import_module(".dataset_cli", __package__), cmd)(a)

    def _store_args(p):
        importlib.import_module(".dataset_cli", __package__).add_store_args(p)

    def _source_args(p):
        _add_problems_root(p)
        p.add_argument("--suite", action="append", choices=SUITES, help="problems: suite(s) (default: v0.1 then v3)")
        p.add_argument("--records", action="append", type=Path, help="runs: extra run records (.jsonl, .parquet or a folder)")
        p.add_argument("--baselines", action="append", type=Path, help="baselines: extra measured baseline JSONL files")
        p.add_argument("--workers", type=int, help="problems: analysis processes (default: up to 2)")
        p.add_argument("--no-cache", action="store_true", help="problems: re-analyse every problem (no row cache)")
        p.add_argument("--no-upstream", action="store_true",
                       help="runs/baselines: leave out the shipped upstream sweep (and the baselines derived from it)")

    p = sub.add_parser("build", help="build the datasets (problems, baselines, runs) and publish them into the local store")
    p.add_argument("what", nargs="?", default="all", choices=["problems", "baselines", "runs", "all"])
    _source_args(p)
    p.add_argument("--out", type=Path, help="keep the built folders here (then nothing is published unless --publish)")
    p.add_argument("--publish", action="store_true", help="with --out: publish as well")
    _store_args(p)
    p.set_defaults(func=_ds("cmd_build"))

    p = sub.add_parser("publish", help="build (or take --folder) and publish one dataset to the local store or the Hub")
    p.add_argument("dataset", help="problems, baselines, runs (or a full dataset name)")
    p.add_argument("--tag", help="tag for the published commit (problems: default the suite); tags never move")
    p.add_argument("--folder", type=Path, help="publish this built dataset folder instead of building")
    p.add_argument("--message", help="commit message")
    p.add_argument("--private", action="store_true", help="hub: create the repo private")
    _source_args(p)
    _store_args(p)
    p.set_defaults(func=_ds("cmd_publish"))

    p = sub.add_parser("migrate", help="rewrite a runs dataset's shards in the current record schema (one commit)")
    p.add_argument("dataset", help="runs (or a full dataset name)")
    _store_args(p)
    p.set_defaults(func=_ds("cmd_migrate"))

    p = sub.add_parser("pull", help="resolve a revision and materialise it as a dataset folder")
    p.add_argument("dataset", help="problems, baselines, runs (or a full dataset name)")
    p.add_argument("--revision", default="main", help="tag, branch or commit id (default main)")
    p.add_argument("--out", type=Path, help="copy the folder here (default: print the store's snapshot folder)")
    _store_args(p)
    p.set_defaults(func=_ds("cmd_pull"))

    p = sub.add_parser("serve", help="serve the local store over the Hub's HTTP API on 127.0.0.1 (HF_ENDPOINT)")
    p.add_argument("--port", type=int, default=8990)
    p.add_argument("--store-root", type=Path, help="local store root (default: $KB_STORE, else <checkout>/.kb/store)")
    p.add_argument("--org", default="local", help="the namespace that names the store's datasets too (default local)")
    p.add_argument("--writable", action="store_true", help="accept publishes (create repo, commit, tag)")
    p.add_argument("--token", default=os.environ.get("KB_SERVE_TOKEN"),
                   help="with --writable: the token writes must carry (default: $KB_SERVE_TOKEN, else none needed; the "
                        "variable keeps it off the command line, which every process of the host may read)")
    p.add_argument("--background", action="store_true", help="serve from a background process and return")
    p.add_argument("--stop", action="store_true", help="stop the background server of --port")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("revisions", help="list a dataset's branches and tags with their commit ids")
    p.add_argument("dataset", help="problems, baselines, runs (or a full dataset name)")
    _store_args(p)
    p.set_defaults(func=_ds("cmd_revisions"))

    return ap


def main(argv=None) -> int:
    import signal

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `kb ls | head` ends quietly
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a clear one-line error instead of a traceback for expected failures
        # the package's own error types, from the modules this command loaded (importing one would cost torch's import)
        ours = [getattr(sys.modules[m], n) for m, n in (("kb_data.problems", "ProblemError"),
                ("kb_data.schema", "SchemaError"), ("kb_data.store", "IntegrityError"),
                ("kb_data.harness.batch", "OutputBusy")) if m in sys.modules]
        if isinstance(e, (*ours, OSError, ValueError, KeyError)):  # OSError: a missing file, a folder for a file, ...
            print(f"kb {args.cmd}: error: {e}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
