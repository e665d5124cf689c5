"""`kb eval`, `kb calibrate`, `kb baselines`: the grading commands (parser entries in cli.py).

Each checks the device and, on a CPU, whether the problem fits this machine's memory before anything is graded.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path


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

    from .harness.worker import cuda_devices, device_index

    if device is None:
        return "cuda:0" if cuda_devices() else "cpu"
    if device.startswith("cuda"):
        devices = cuda_devices()
        if not devices:
            raise ValueError(f"--device {device}: this machine has no usable CUDA GPU (torch {torch.__version__}); "
                             "grade on the CPU with --device cpu, or install a CUDA build of torch")
        if device_index(device) >= len(devices):
            raise ValueError(f"--device {device}: only {len(devices)} CUDA device(s) are visible")
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


def _warn_if_unsandboxed(level: str) -> None:
    if level == "none":
        print("WARNING: --sandbox none: the submission runs with this user's rights, its network and its files "
              "(its verdict is still decided in the judge's process)", file=sys.stderr)


def cmd_eval(args) -> int:
    from .harness.worker import start_forkserver

    start_forkserver()  # its imports run beside this process's own
    from .harness.baselines import BaselineIndex
    from .harness.grade import Options, grade
    from .problems import ProblemSet

    device = _check_device(args.device)
    baselines = BaselineIndex.from_files(args.baselines) if args.baselines else BaselineIndex.shipped()
    opt = Options(model=args.model, gpu=args.gpu, device=args.device, timeout_s=args.timeout, trials=args.trials,
                  warmup=args.warmup, require_custom_kernel=not args.allow_framework,
                  measure_baseline=True if args.measure_baseline else None, pair_reference=not args.no_pair,
                  sandbox=args.sandbox, memory_limit_gb=args.memory_limit_gb, progress=not args.batch,
                  resident_judge=False if args.fresh_judge else None)
    _warn_if_unsandboxed(args.sandbox)
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
        from .io import RECORDS_MODE, append_jsonl

        append_jsonl(args.out, [row], mode=RECORDS_MODE)
        if base is not None:
            append_jsonl(_baselines_path(args.out), [base.to_row()], mode=RECORDS_MODE)
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
    from .harness.worker import start_forkserver

    start_forkserver()
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
    opt = Options(device=args.device, gpu=args.gpu, trials=args.trials, warmup=args.warmup, timeout_s=args.timeout,
                  sandbox=args.sandbox)
    _warn_if_unsandboxed(args.sandbox)
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
    from .harness.baselines import SPREAD_KINDS, run_to_run_spread
    from .io import read_jsonl_rows

    res = run_to_run_spread(read_jsonl_rows(args.first), read_jsonl_rows(args.second), args.min_ms)
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
