"""Harness benchmarks (run on a GPU machine; figures go to BENCHMARKS.md).

    python benchmarks/bench_harness.py overhead [--out DIR]
        wall time of grading a level-1 submission whose baseline is known, cold and warm,
        with the per-stage breakdown the worker reports.
    python benchmarks/bench_harness.py pool --n 50 [--naive 10]
        throughput of a batch of cheap submissions through the worker pool, against a
        fresh `kb eval` process per submission (which pays Python + torch + CUDA start-up each time).
    python benchmarks/bench_harness.py scale --per-gpu 30 --gpus 4,2,1
        `kb eval --batch` of the GPU honest corpus (Triton and CUDA kernels, 5 problems in rotation) on
        k GPUs with 30*k submissions for each k (the first k with --workers auto): throughput, and how
        many records each GPU graded.
    python benchmarks/bench_harness.py tilt [--repeats 30]
        the paired loop timing one CPU matmul against itself, with an output check after the subject's
        calls as in grading: the ratio's median over repeats shows whether the loop itself favours a side.
    python benchmarks/bench_harness.py noise --baselines FILE [--repeats 2] [--min-timed-ms MS]
        the reference graded as its own submission on every v3 level-1/2 problem whose
        baseline is eager: speedup should be 1.00 +/- 0.02. --min-timed-ms overrides the
        harness's floor on the timed loop's length (timing.MIN_PAIRED_MS); --symmetric-check
        gives the reference's timed calls the same output check as the submission's.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb_data.problems import ProblemSet  # noqa: E402
from kb_data.harness.baselines import BaselineIndex  # noqa: E402
from kb_data.harness.grade import Options, grade  # noqa: E402

GELU = "v3/level1/26_GELU_"
TRITON_GELU = ROOT / "tests" / "corpus" / "honest" / "triton_gelu.py"


def _write(out: Path, name: str, data) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(json.dumps(data, indent=1, default=str))


def overhead(args) -> dict:
    ps = ProblemSet()
    problem = ps.load(GELU)
    code = TRITON_GELU.read_text()
    t0 = time.monotonic()
    rec, base = grade(problem, code, options=Options(measure_baseline=True))
    first = {"wall_s": time.monotonic() - t0, "stages": json.loads(rec.harness_seconds), "status": rec.status}
    index = BaselineIndex([base.to_row()])
    runs = []
    for i in range(args.repeats):
        t0 = time.monotonic()
        r, b = grade(problem, code + f"\n# run {i}\n", options=Options(), baselines=index)
        runs.append({"wall_s": time.monotonic() - t0, "stages": json.loads(r.harness_seconds), "status": r.status,
                     "speedup": r.speedup, "flags": r.flags, "baseline_measured": b is not None})
    ref_runs = []
    for i in range(args.repeats):
        t0 = time.monotonic()
        r, _ = grade(problem, problem.code + f"\n# run {i}\n", options=Options(require_custom_kernel=False), baselines=index)
        ref_runs.append({"wall_s": time.monotonic() - t0, "stages": json.loads(r.harness_seconds), "status": r.status,
                         "speedup": r.speedup})
    res = {"first_with_baseline_measurement": first, "known_baseline_triton": runs, "known_baseline_reference": ref_runs,
           "baseline": base.to_row()}
    print(f"first grade (measures eager + torch.compile baseline): {first['wall_s']:.1f} s")
    for name, rs in (("Triton GELU, baseline known", runs), ("reference as submission, baseline known", ref_runs)):
        walls = [r["wall_s"] for r in rs]
        sub = [r["stages"].get("import_and_build_submission", 0) for r in rs]
        print(f"{name}: wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}), of which importing/building "
              f"the submission {statistics.median(sub):.2f} s; statuses {[r['status'] for r in rs]}")
        print(f"  stages of the last run: {rs[-1]['stages']}")
    return res


def pool(args) -> dict:
    """Prints as it goes and rewrites its JSON after each phase: a run cut by a time limit keeps what it measured."""
    from kb_data.harness.batch import run_batch

    code = TRITON_GELU.read_text()
    work = Path(tempfile.mkdtemp(prefix="kb-pool-"))
    subs = work / "subs"
    subs.mkdir()
    manifest = []
    for i in range(args.n):
        p = subs / f"gelu_{i:03d}.py"
        p.write_text(code + f"\n# submission {i}\n")
        manifest.append(json.dumps({"problem": GELU, "submission": str(p), "model": "bench"}))
    (work / "manifest.jsonl").write_text("\n".join(manifest) + "\n")
    # one measured baseline shared by all, as in a real sweep
    problem = ProblemSet().load(GELU)
    t0 = time.monotonic()
    _, base = grade(problem, code, options=Options(measure_baseline=True, compile_baseline=False))
    bfile = work / "baseline.jsonl"
    bfile.write_text(json.dumps(base.to_row()) + "\n")
    res = {"n": args.n, "first_grade_s": time.monotonic() - t0}
    print(f"first grade (forkserver start, baseline measured): {res['first_grade_s']:.1f} s", flush=True)
    t0 = time.monotonic()
    sink = run_batch(work / "manifest.jsonl", work / "out", options=Options(model="bench"), workers="auto",
                     baselines=BaselineIndex.from_files([bfile]), progress=False)
    pool_s = time.monotonic() - t0
    statuses = [r.status for r in sink.records()]
    res.update(pool_total_s=pool_s, pool_per_sub_s=pool_s / args.n, pool_statuses=statuses)
    print(f"pool: {args.n} submissions in {pool_s:.1f} s = {pool_s / args.n:.2f} s each "
          f"({3600 * args.n / pool_s:.0f}/hour); statuses: { {s: statuses.count(s) for s in set(statuses)} }", flush=True)
    _write(args.out, "bench_harness_pool.json", res)
    naive_s = []
    for i in range(args.naive):
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "kb_data.cli", "eval", GELU, str(subs / f"gelu_{i:03d}.py"),
                        "--baselines", str(bfile), "--model", "naive"], capture_output=True, check=False)
        naive_s.append(time.monotonic() - t0)
        print(f"fresh process {i + 1}/{args.naive}: {naive_s[-1]:.1f} s", flush=True)
        res.update(naive_n=len(naive_s), naive_s=naive_s, naive_per_sub_s=statistics.mean(naive_s))
        _write(args.out, "bench_harness_pool.json", res)
    if naive_s:
        m = statistics.mean(naive_s)
        print(f"fresh process per submission: {m:.2f} s each over {len(naive_s)} ({3600 / m:.0f}/hour); "
              f"pool is {m / (pool_s / args.n):.2f}x faster")
    return res


SCALE_ENTRIES = ["triton_gelu", "triton_softmax", "triton_gemm", "triton_fused_linear_scale_residual", "cuda_layernorm"]


def scale(args) -> dict:
    """Prints as it goes and rewrites its JSON after each batch."""
    import collections

    from kb_data.harness.batch import visible_devices
    from kb_data.schema import RunRecord
    from tests.corpus import entries

    corpus = {e.path.stem: e for e in entries()}
    work = Path(tempfile.mkdtemp(prefix="kb-scale-"))
    n_gpu = len([d for d in visible_devices("auto") if d.startswith("cuda")])
    res = {"visible_gpus": n_gpu, "runs": []}

    def batch(tag: str, n: int, workers: str) -> dict:
        subs = work / tag
        subs.mkdir()
        rows = []
        for i in range(n):
            e = corpus[SCALE_ENTRIES[i % len(SCALE_ENTRIES)]]
            p = subs / f"{i:04d}_{e.path.stem}.py"
            p.write_text(e.path.read_text() + f"\n# {tag} submission {i}\n")
            rows.append(json.dumps({"problem": e.problem, "submission": str(p), "model": "bench"}))
        manifest = subs / "manifest.jsonl"
        manifest.write_text("\n".join(rows) + "\n")
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "kb_data.cli", "eval", "--batch", str(manifest), "--workers", workers,
                               "--out", str(work / f"out_{tag}"), "--model", "bench"], capture_output=True, text=True)
        wall = time.monotonic() - t0
        recs = [RunRecord.from_row(json.loads(x)) for x in (work / f"out_{tag}" / "records.jsonl").read_text().splitlines()]
        run = {"tag": tag, "workers": workers, "n": n, "wall_s": wall, "per_hour": 3600 * len(recs) / wall,
               "records": len(recs), "exit": proc.returncode,
               "statuses": dict(collections.Counter(r.status for r in recs)),
               "per_gpu": dict(sorted(collections.Counter(str(r.device_index) for r in recs).items())),
               "flags": dict(collections.Counter(f for r in recs for f in r.flags))}
        if proc.returncode:
            run["stderr"] = proc.stderr[-2000:]
        print(f"{tag}: {len(recs)}/{n} records in {wall:.1f} s with --workers {workers} = {run['per_hour']:.0f}/hour; "
              f"per GPU {run['per_gpu']}; statuses {run['statuses']}; flags {run['flags']}", flush=True)
        return run

    # compiles the CUDA extension and the Triton kernels into the on-disk caches, as a long-running grader has them
    res["warm"] = batch("warm", len(SCALE_ENTRIES), "auto")
    for k in args.gpus:
        if k > n_gpu:
            continue
        res["runs"].append(batch(f"gpus{k}", args.per_gpu * k, "auto" if k == n_gpu else str(k)))
        _write(args.out, "bench_harness_scale.json", res)
    base = next((r for r in res["runs"] if r["workers"] == "1"), None)
    for r in res["runs"]:
        if base:
            r["speedup_vs_1"] = r["per_hour"] / base["per_hour"]
            print(f"{r['workers']:>4s} workers: {r['per_hour']:.0f}/hour, {r['speedup_vs_1']:.2f}x one GPU")
    return res


def tilt(args) -> dict:
    import torch

    from kb_data.harness.timing import Timer

    torch.set_num_threads(1)
    a, b = torch.randn(192, 192), torch.randn(192, 192)

    def check(i, out):  # the kind of work grading does between calls: a reduction and a host sync
        (out - out).abs().max().item()
        torch.isfinite(out).all().item()

    ratios = []
    for _ in range(args.repeats):
        s, o = Timer("cpu", l2_flush=True).run_paired(lambda i: a @ b, lambda i: a @ b, warmup=20, trials=400, check=check)
        ratios.append(o.median_ms / s.median_ms)
    res = {"repeats": args.repeats, "ratios": ratios, "median": statistics.median(ratios), "min": min(ratios),
           "max": max(ratios)}
    print(f"other/subject over {args.repeats} runs: median {res['median']:.4f} min {res['min']:.4f} max {res['max']:.4f}")
    return res


def noise(args) -> dict:
    """Three ratios per run, all reference over reference: the record's speedup (the eager baseline paired with
    the submission, trial for trial), the reference timed alone in the same worker just before, and the
    stored baseline row (another process, another time)."""
    ps = ProblemSet()
    index = BaselineIndex.from_files([args.baselines])
    ids = [pid for pid in ps.ids("v3", "level1") + ps.ids("v3", "level2")]
    extra = {"min_timed_ms": args.min_timed_ms} if args.min_timed_ms is not None else {}
    if args.symmetric_check:
        extra["symmetric_check"] = True
    out = {}
    for pid in ids:
        problem = ps.load(pid)
        row = index.lookup(pid, args.gpu)
        if row is None or row["baseline_type"] != "pytorch_eager":
            continue
        runs = []
        for i in range(args.repeats):
            r, _ = grade(problem, problem.code + f"\n# repeat {i}\n",
                         options=Options(require_custom_kernel=False, check_fp64=False, extra=extra), baselines=index)
            ok = r.status == "ok" and r.sol_ms
            runs.append({"status": r.status, "flags": r.flags, "error": r.error, "sol_ms": r.sol_ms,
                         "sol_p10_ms": r.sol_p10_ms, "sol_p90_ms": r.sol_p90_ms, "n_trials": r.n_trials,
                         "paired": r.speedup if ok else None,
                         "alone": r.ref_alone_ms / r.sol_ms if ok and r.ref_alone_ms else None,
                         "stored": row["baseline_ms"] / r.sol_ms if ok else None})
        out[pid] = {"baseline_ms": row["baseline_ms"], "runs": runs}
        show = lambda k: " ".join("%.3f" % x[k] if x[k] else x["status"] for x in runs)
        bad = any(x["paired"] is None or abs(x["paired"] - 1) > 0.02 for x in runs)
        print(f"{pid:58s} {row['baseline_ms']:8.4f} ms  paired {show('paired')}  alone {show('alone')}  "
              f"stored {show('stored')}" + ("  <-- outside 1.00+/-0.02" if bad else ""))
        for x in runs:
            if x["status"] != "ok":
                print(f"    {x['status']}: {x['flags']} {str(x['error'])[:200]}")
        _write(args.out, "bench_harness_noise.json", out)  # a run cut by a time limit keeps what it measured
    for kind in ("paired", "alone", "stored"):
        flat = [x[kind] for v in out.values() for x in v["runs"] if x[kind]]
        if flat:
            print(f"{kind:7s} {len(out)} problems, {len(flat)} runs: min {min(flat):.3f} median {statistics.median(flat):.3f} "
                  f"max {max(flat):.3f}; within 1.00+/-0.02: {sum(abs(s - 1) <= 0.02 for s in flat)}/{len(flat)}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["overhead", "pool", "noise", "scale", "tilt"])
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--naive", type=int, default=10)
    ap.add_argument("--baselines", type=Path)
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--min-timed-ms", type=float)
    ap.add_argument("--symmetric-check", action="store_true",
                    help="noise: check the reference's timed outputs too (is the check what tilts the ratio?)")
    ap.add_argument("--per-gpu", type=int, default=30)
    ap.add_argument("--gpus", type=lambda v: [int(x) for x in v.split(",")], default=[4, 2, 1])
    args = ap.parse_args()
    res = {"overhead": overhead, "pool": pool, "noise": noise, "scale": scale, "tilt": tilt}[args.what](args)
    _write(args.out, f"bench_harness_{args.what}.json", res)


if __name__ == "__main__":
    main()
