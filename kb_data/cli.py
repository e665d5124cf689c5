"""The `kb` command line."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

from .paths import DATA_DIR
from .schema import SUITES


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


# ---------------------------------------------------------------------------- CPU honesty
# A CPU grade holds the reference and the candidate (weights twice), an untouched copy of the inputs, both
# sides' outputs and a float64 reference for the precision check: about this many times the problem's
# inputs + weights + outputs (min_bytes, from the meta-device analysis).
CPU_NEED_FACTOR = 6


def _available_bytes() -> int:
    """Memory this machine can give a new process now (MemAvailable; else total physical memory)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _memory_needs(ids: list[str], ps) -> dict[str, int | None]:
    """problem id -> bytes a CPU grade needs (None: unknown)."""
    from .problems import load_problem

    stored = _stored_min_bytes()
    out = {}
    for pid in ids:
        mb = _min_bytes(load_problem(ps.paths[pid], ps.root), stored)
        out[pid] = None if mb is None else CPU_NEED_FACTOR * mb
    return out


def _min_bytes(problem, stored: dict | None = None) -> int | None:
    """The problem's inputs + weights + outputs in bytes: from the built problems datasets of the local store when
    they hold this very code, else from a meta-device analysis of the file (no compute)."""
    import hashlib

    from .meta import analyze_on_meta

    stored = _stored_min_bytes() if stored is None else stored
    hit = stored.get((problem.problem_id, hashlib.sha256(problem.code.encode("utf-8")).hexdigest()))
    return hit if hit is not None else analyze_on_meta(problem, with_trace=False).min_bytes


def _stored_min_bytes() -> dict[tuple[str, str], int]:
    """(problem id, sha256 of its code) -> min_bytes, from every suite tag of the local store (none: {})."""
    from .folders import RevisionError
    from .schema import SUITES
    from .store import LocalStore

    store, out = LocalStore(), {}
    for suite in SUITES:
        try:
            table, _ = store.read_table("kernelbench-v3-problems", suite, columns=["problem_id", "sha256", "min_bytes"])
        except (RevisionError, ValueError, FileNotFoundError):
            continue
        for row in table.to_pylist():
            if row["min_bytes"] is not None:
                out[(row["problem_id"], row["sha256"])] = row["min_bytes"]
    return out


def _check_device(device: str | None) -> str:
    """The device a grade will run on; a CUDA device this machine lacks is a one-line error."""
    import torch

    if device is None:
        return "cuda:0" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(f"--device {device}: this machine has no usable CUDA GPU (torch {torch.__version__}); "
                             "grade on the CPU with --device cpu, or install a CUDA build of torch")
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"--device {device}: only {torch.cuda.device_count()} CUDA device(s) are visible")
    elif device != "cpu":
        raise ValueError(f"--device {device!r}: use cuda:N or cpu")
    return device


def _check_fits(pid: str, min_bytes: int | None, force: bool) -> None:
    """Refuse a CPU grade this machine's memory cannot hold (it would be OOM-killed minutes later)."""
    if min_bytes is None or force:
        return
    need, avail = CPU_NEED_FACTOR * min_bytes, _available_bytes()
    if need > avail:
        raise ValueError(f"{pid} needs about {need / 1e9:.1f} GB on the CPU ({CPU_NEED_FACTOR} x its "
                         f"{min_bytes / 1e9:.2f} GB of inputs, weights and outputs) and this machine has "
                         f"{avail / 1e9:.1f} GB available. Grade it on a GPU (--device cuda:0), pick a problem that "
                         "fits (`kb ls --fits`), or pass --ignore-memory to try anyway")


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


def cmd_eval(args) -> int:
    from .harness.baselines import BaselineIndex
    from .harness.grade import Options, grade
    from .problems import ProblemSet

    device = _check_device(args.device)
    baselines = BaselineIndex.from_files(args.baselines) if args.baselines else BaselineIndex.shipped()
    opt = Options(model=args.model, gpu=args.gpu, device=args.device, timeout_s=args.timeout, trials=args.trials,
                  warmup=args.warmup, require_custom_kernel=not args.allow_framework,
                  measure_baseline=True if args.measure_baseline else None, pair_reference=not args.no_pair,
                  sandbox=args.sandbox, memory_limit_gb=args.memory_limit_gb, progress=not args.batch)
    if args.sandbox == "none":
        print("WARNING: --sandbox none: the submission runs with this user's rights, its network and its files "
              "(its verdict is still decided in the judge's process)", file=sys.stderr)
    if args.batch:
        return _eval_batch(args, opt, baselines, device)
    if not (args.problem and args.submission):
        raise ValueError("give a problem and a submission file, or --batch")
    code = args.submission.read_text(encoding="utf-8", errors="replace")
    if args.revision:  # the problem as a dataset revision pins it: code, rules and the immutable id
        from .stores import open_store
        from .stream import stream_problem

        store = open_store("hub", org=args.org) if args.store == "hub" else open_store("local")
        hit = stream_problem(args.problem, args.revision, store=store, suite=args.suite)
        problem, revision, min_bytes = hit.problem, hit.revision, hit.row.get("min_bytes")
    else:
        problem, revision = ProblemSet(args.problems).load(args.problem, args.suite), None
        min_bytes = _min_bytes(problem) if device == "cpu" else None
    if device == "cpu":
        _check_fits(problem.problem_id, min_bytes, args.ignore_memory)
    rec, base = grade(problem, code, name=str(args.submission), options=opt, baselines=baselines,
                      problems_revision=revision)
    row = rec.to_row()
    if args.json:
        print(json.dumps(row, sort_keys=True, default=str))
    else:
        speed = f"speedup {rec.speedup:.3f}x" if rec.speedup is not None else "no speedup"
        print(f"{rec.problem_id}: {rec.status}, {speed}" + (f", flags {','.join(rec.flags)}" if rec.flags else "")
              + (f"; {rec.error}" if rec.error else ""))
    if args.out:
        from .io import append_jsonl

        append_jsonl(args.out, [row])
        if base is not None:
            append_jsonl(_baselines_path(args.out), [base.to_row()])
        print(f"record appended to {args.out}", file=sys.stderr)
    return 0 if rec.status == "ok" else 1


def _baselines_path(records: Path) -> Path:
    """Where `kb eval --out F` puts a baseline it measured: beside F, never inside a record line."""
    return records.with_name(records.stem + ".baselines.jsonl")


def _eval_batch(args, opt, baselines, device: str) -> int:
    """`kb eval --batch`: ids that name no problem are skipped here (and counted as skipped), the rest graded."""
    import tempfile

    from .harness.batch import discover, run_batch
    from .problems import ProblemError, ProblemSet

    ps = ProblemSet(args.problems)
    jobs, skipped = [], []
    for job in discover(args.batch):
        try:
            ps.resolve(job.problem, args.suite)
            jobs.append(job)
        except ProblemError as e:
            skipped.append(f"skip {job.submission}: {e}")
    for line in skipped:
        print(line, file=sys.stderr)
    if skipped:
        print(f"{len(skipped)} submission(s) skipped (no such problem); {len(jobs)} left for the batch",
              file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="kb-batch-") as tmp:
        manifest = Path(tmp) / "jobs.jsonl"  # the resolvable jobs only, so the bar's "done before" is honest
        manifest.write_text("".join(json.dumps({"problem": j.problem, "submission": str(Path(j.submission).resolve()),
                                                "model": j.model}) + "\n" for j in jobs), encoding="utf-8")
        sink = run_batch(manifest, args.out or Path("kb-eval-out"), suite=args.suite, problems_root=args.problems,
                         options=opt, workers=args.workers, baselines=baselines, use_ray=args.ray,
                         ray_address=args.address)
    recs = sink.records() if sink.path.exists() else []  # nothing graded: no records file
    by_status: dict[str, int] = {}
    for r in recs:
        by_status[r.status] = by_status.get(r.status, 0) + 1
    print(f"{len(recs)} records in {sink.path}: " + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items()))
          + (f"; {len(skipped)} skipped" if skipped else ""))
    if sink.harness_failures:
        print(f"{len(sink.harness_failures)} submission(s) not graded: the harness failed on them (traceback above); "
              "run the same command again to grade them:\n  " + "\n  ".join(sink.harness_failures), file=sys.stderr)
        return 1
    return 0


def _runnable_problems(args) -> list[str]:
    """The problems named by --suite/--category/--only that this machine can run: not Metal (Apple GPUs), every
    package in their REQUIRES importable."""
    from .problems import ProblemSet, missing_requirements

    ps = ProblemSet(args.problems)
    ids = []
    for suite in args.suite or [None]:
        for cat in args.category or [None]:
            ids += ps.ids(suite, cat)
    if args.only:  # --only a,b and --only a --only b alike
        ids = [ps.resolve(x.strip()) for arg in args.only for x in arg.split(",") if x.strip()]
    ids = [pid for pid in dict.fromkeys(ids) if not pid.split("/")[1].startswith("metal")]
    return [pid for pid in ids if not missing_requirements(ps.paths[pid].read_text(encoding="utf-8"))]


def cmd_calibrate(args) -> int:
    from .harness.baselines import BaselineIndex
    from .harness.calibrate import VARIANTS, calibrate, report
    from .harness.grade import Options

    device = _check_device(args.device)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if unknown := [v for v in variants if v not in VARIANTS]:
        raise ValueError(f"--variants: unknown {', '.join(unknown)} (one of {', '.join(VARIANTS)})")
    if device == "cpu" and "compiled" in variants:
        variants.remove("compiled")
        print("calibrate: no compiled variant on a CPU (the grades' baselines are eager there)", file=sys.stderr)
    ids = _runnable_problems(args)
    if not ids:
        raise ValueError("no problem selected (see --suite, --category, --only)")
    baselines = BaselineIndex.from_files(args.baselines) if args.baselines else BaselineIndex.shipped()
    opt = Options(device=args.device, gpu=args.gpu, trials=args.trials, warmup=args.warmup, timeout_s=args.timeout)
    vs, failures = calibrate(ids, args.out, variants=variants, problems_root=args.problems, options=opt,
                             workers=args.workers, baselines=baselines)
    print(report(vs))
    print(f"records: {args.out / 'records' / 'records.jsonl'}; verdicts: {args.out / 'calibration.json'}")
    if failures:
        print(f"{len(failures)} job(s) not graded (harness failures): run again to retry", file=sys.stderr)
    return 0 if vs and all(v.ok for v in vs) and not failures else 1


def cmd_baselines_measure(args) -> int:
    from .harness.sweep import sweep

    ids = _runnable_problems(args)
    if args.device == "auto":
        from .harness.batch import visible_devices

        devices = visible_devices("auto")
    else:
        devices = [_check_device(d.strip()) for d in args.device.split(",") if d.strip()]
    rows = sweep(ids, args.out, problems_root=args.problems, gpu=args.gpu_key, device=devices,
                 compile_suites=tuple(x for x in args.compile_suites.split(",") if x), workers=args.workers,
                 chunk=args.chunk, max_seconds=args.max_seconds, compile_budget_s=args.compile_budget)
    return 0 if rows is not None else 1


def cmd_baselines_ship(args) -> int:
    from .harness.sweep import ship

    n, k = ship(args.files, args.data_dir, args.gpu_key)
    print(f"{args.data_dir}: {n} baseline rows, {k} problem checks for {args.gpu_key}")
    return 0


def cmd_baselines_spread(args) -> int:
    from .harness.baselines import SPREAD_KINDS, read_rows, run_to_run_spread

    res = run_to_run_spread(read_rows(args.first), read_rows(args.second), args.min_ms)
    pct = lambda x: "-" if x is None else f"{100 * x:+.1f}%"
    ms = lambda x: "-" if x is None else f"{x:.4f}"
    short = lambda t: "compile" if t == "torch_compile" else "eager"
    # the GPU-alone columns only where both files have such medians (rows of schema 1.3 or later)
    kinds = [k for k in SPREAD_KINDS if k in ("eager", "compile") or any(r[k][2] is not None for r in res["rows"])]
    names = {"eager": "eager", "compile": "compile", "eager_gpu": "eager GPU", "compile_gpu": "compile GPU"}
    print("| problem | " + " | ".join(f"{names[k]} 1 | {names[k]} 2 | diff" for k in kinds) + " | choice 1 / 2 |")
    print("|---|" + "---:|---:|---:|" * len(kinds) + "---|")
    for r in res["rows"]:
        cells = " | ".join(f"{ms(r[k][0])} | {ms(r[k][1])} | {pct(r[k][2])}" for k in kinds)
        print(f"| `{r['problem_id']}` | {cells} | {short(r['choice'][0])} / {short(r['choice'][1])} |")
    s = res["summary"]
    print(f"\n{s['problems']} problems in both, {s['flipped']} baseline choice(s) flipped; over {args.min_ms} ms:")
    for kind in kinds:
        k = s[kind]
        if k["n"]:
            print(f"  {names[kind]}: median |diff| {100 * k['median_abs']:.1f}%, max {100 * k['max_abs']:.1f}%, "
                  f"under 3%: {k['under_3pct']}/{k['n']}")
    if s["calibration"]:
        print("calibration, second / first (median over the matched rows): "
              + ", ".join(f"{k.removesuffix('_ms')} {v:.3f}" for k, v in s["calibration"].items()))
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
    p.add_argument("--workers", default="auto", help="batch: 'auto' (one per visible GPU) or a number")
    p.add_argument("--ray", action="store_true", help="batch: run the jobs as Ray tasks")
    p.add_argument("--address", help="Ray cluster address")
    p.add_argument("--sandbox", default="auto", choices=["auto", "strict", "strong", "process", "none"],
                   help="isolation of the submission's process (SECURITY.md): auto, the strongest available; strict, "
                   "refuse to run below strong; none, explicit and loud")
    p.add_argument("--memory-limit-gb", type=float, help="host memory of the submission's processes (default: sized "
                   "by the problem); an overrun ends as status memory_exceeded")
    p.set_defaults(func=cmd_eval)

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
    p.add_argument("--baselines", type=Path, action="append", default=[],
                   help="baseline JSONL files to look up (default: the shipped measured baselines)")
    p.set_defaults(func=cmd_calibrate)

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
    p.set_defaults(func=cmd_baselines_measure)
    p = bsub.add_parser("spread", help="run-to-run spread between two measurements of the same baselines")
    p.add_argument("first", type=Path, help="baseline JSONL (e.g. the shipped rows)")
    p.add_argument("second", type=Path, help="baseline JSONL measured again (e.g. `measure --only ...` in a later call)")
    p.add_argument("--min-ms", type=float, default=0.1, help="summarise problems whose first median is over this")
    p.set_defaults(func=cmd_baselines_spread)
    p = bsub.add_parser("ship", help="merge `measure` output into the package's shipped rows (one row per problem and timing method)")
    p.add_argument("files", nargs="+", type=Path, help="JSONL files written by `kb baselines measure` (later ones win)")
    p.add_argument("--gpu-key", required=True, help="the rows' GPU key, e.g. H200")
    p.add_argument("--data-dir", type=Path, default=DATA_DIR)
    p.set_defaults(func=cmd_baselines_ship)

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
    p.add_argument("--token", help="with --writable: the token writes must carry (default: none needed)")
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
        from .problems import ProblemError
        from .schema import SchemaError
        from .store import IntegrityError

        if isinstance(e, (ProblemError, SchemaError, IntegrityError, FileNotFoundError, ValueError, KeyError)):
            print(f"kb {args.cmd}: error: {e}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
