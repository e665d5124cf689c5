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
    python benchmarks/bench_harness.py pairing --report SAVED.json.gz
        where a paired ratio's error comes from (GPU): the reference timed against itself in five arms
        (as graded; subject and other swapped; one object on both sides; the output check after the subject's
        calls only, as before 2026-11-29; the end event recorded before the device sync), every trial's time
        kept for offline analysis.
    python benchmarks/bench_harness.py stability [--repeats 5]
        how much 16 problems' eager medians move from one measurement to the next in the same process
        (the baseline spread of #8), timed as the harness does (flush_queued) and as harness 0.1 did
        (device_synced: the device synchronised before the start and the end event of every call).
    python benchmarks/bench_harness.py stability --report SAVED.json [--baselines OTHER.jsonl]
        the same table from a saved run; with --baselines, each problem's eager median in OTHER (measured in
        another call) against the median of the saved rounds.
    python benchmarks/bench_harness.py host [--repeats 10]
        how the host's pace moves from one process to the next (the sweep times each chunk in a fresh child): fresh
        processes, --repeats left to the scheduler and one pinned to each CPU, each timing the calibration, the host
        cost of a kernel launch, a pure-Python loop, and two host-sensitive references (63_conv_standard_2D eager,
        40_LayerNorm under torch.compile), with the CPUs it ran on.
    python benchmarks/bench_harness.py host-share [--repeats 3] [--problems ID,ID]
        how much of a reference's timed interval is the host's: in --repeats fresh processes, each problem (default:
        the repeat subset of h200.sh) timed as graded and again with a spin kernel of 10 ms or more between the L2
        flush and the start event, so that the host has queued the whole forward before the GPU reaches it (GPU work
        alone: execute.time_model_gpu_alone, as the sweep's `*_gpu_ms`; the seventh session's run used a fixed spin);
        eager, and under torch.compile for v3. Across processes, the second should repeat where the first does not.
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


PAIRING_PROBLEMS = ["v3/level1/26_GELU_", "v3/level1/23_Softmax", "v3/level1/47_Sum_reduction_over_a_dimension",
                    "v3/level1/4_Matrix_vector_multiplication_", "v3/level1/3_Batched_matrix_multiplication",
                    "v3/level1/9_Tall_skinny_matrix_multiplication_", "v3/level1/63_conv_standard_2D__square_input__square_kernel",
                    "v3/level1/82_conv_depthwise_2D_square_input_square_kernel", "v3/level2/55_Matmul_MaxPool_Sum_Scale",
                    "v3/level2/59_Matmul_Swish_Scaling", "v3/level2/66_Matmul_Dropout_Mean_Softmax"]


def pairing(args) -> dict:
    raise SystemExit("this experiment timed the in-process harness before the trust boundary (before 2026-12-02); "
                     "its conclusions are in BENCHMARKS.md and its code is at commit f9372bb")


def pairing_report(res: dict) -> None:
    """Per arm, over its runs: both estimators of the ratio (median, runs within +/-0.02, worst deviation,
    standard deviation), and the trials by position in the ABBA loop (median over runs of each quarter's
    median relative to the run's): in even iterations the subject is timed first, in odd ones second."""
    from kb_data.harness.timing import Timing, paired_ratio

    for arm in res["arms"]:
        rs = [r for r in res["runs"] if r["arm"] == arm]
        est = {"ratio of medians": [statistics.median(r["other_ms"]) / statistics.median(r["subject_ms"]) for r in rs],
               "median of pair ratios": [paired_ratio(Timing(r["subject_ms"], ""), Timing(r["other_ms"], "")) for r in rs]}
        line = "; ".join(f"{name}: median {statistics.median(xs):.4f}, within {sum(abs(x - 1) <= 0.02 for x in xs)}/{len(xs)}, "
                         f"max |dev| {max(abs(x - 1) for x in xs):.3f}, sd {statistics.pstdev(xs):.4f}"
                         for name, xs in est.items())
        pos = {k: [] for k in ("subject even", "subject odd", "other even", "other odd")}
        for r in rs:
            m = statistics.median(r["subject_ms"] + r["other_ms"])
            for side in ("subject", "other"):
                pos[f"{side} even"].append(statistics.median(r[f"{side}_ms"][0::2]) / m)
                pos[f"{side} odd"].append(statistics.median(r[f"{side}_ms"][1::2]) / m)
        print(f"{arm:18s} {line}\n{'':18s} by position: " + ", ".join(f"{k} {statistics.median(v):.4f}" for k, v in pos.items()))


STABILITY_PROBLEMS = ["v3/level1/26_GELU_", "v3/level1/23_Softmax", "v3/level1/47_Sum_reduction_over_a_dimension",
                      "v3/level1/82_conv_depthwise_2D_square_input_square_kernel", "v3/level1/1_Square_matrix_multiplication_",
                      "v3/level1/2_Standard_matrix_multiplication_", "v3/level1/9_Tall_skinny_matrix_multiplication_",
                      "v3/level1/36_RMSNorm_", "v3/level1/40_LayerNorm", "v3/level1/42_Max_Pooling_2D",
                      "v3/level1/63_conv_standard_2D__square_input__square_kernel", "v3/level2/6_Conv3d_Softmax_MaxPool_MaxPool",
                      "v3/level2/17_Conv2d_InstanceNorm_Divide", "v3/level2/37_Matmul_Swish_Sum_GroupNorm",
                      "v3/level2/52_Conv2d_Activation_BatchNorm", "v3/level2/85_Conv2d_GroupNorm_Scale_MaxPool_Clamp"]


def stability(args) -> dict:
    """Rounds outermost, so that one problem's measurements are tens of seconds apart."""
    import torch

    from kb_data.harness import reference as execute, timing
    from kb_data.problems import exec_problem_code

    device = torch.device("cuda:0")
    execute.use_gpu(device, {"versions": {}})

    def clock():
        try:
            return torch.cuda.clock_rate(device)  # SM clock in MHz, through NVML
        except Exception:
            return None

    def device_synced(model, rot, rules) -> timing.Timing:
        """Harness 0.1's timed call: the device synchronized before the start and before the end event."""
        def timed(self, call, i):
            self.flush()
            timing._cuda_sync(self.device)
            start, end = timing._Event(enable_timing=True), timing._Event(enable_timing=True)
            timing._event_record(start)
            out = call(i)
            timing._cuda_sync(self.device)
            timing._event_record(end)
            timing._event_sync(end)
            return timing._event_elapsed(start, end), out, None, None

        graded = timing.Timer._timed
        timing.Timer._timed = timed
        try:
            return execute.time_model(model, rot, rules, device, {})
        finally:
            timing.Timer._timed = graded

    ps = ProblemSet()
    pids = args.problems.split(",") if args.problems else STABILITY_PROBLEMS
    loaded = {}
    for pid in pids:
        problem = ps.load(pid)
        mod = exec_problem_code(problem.code, pid)
        loaded[pid] = (problem.rules, mod, execute.build_reference(mod, problem.rules, device, 0))
    protocols = {  # the harness as it is, and as it was until 0.2 (BENCHMARKS.md, Stability)
        "flush_queued": lambda model, rot, rules: execute.time_model(model, rot, rules, device, {}),
        "device_synced": device_synced,
    }
    res = {"device": torch.cuda.get_device_name(device), "rows": []}
    for rnd in range(args.repeats):
        for pid, (rules, mod, ref) in loaded.items():
            rot = execute.RotatingInputs(mod, rules, device, {})
            line = []
            for name, measure in protocols.items():
                before = clock()
                t = measure(ref, rot, rules)
                res["rows"].append({"round": rnd, "problem": pid, "protocol": name, "median_ms": t.median_ms,
                                    "p10_ms": t.p10_ms, "p90_ms": t.p90_ms, "n": len(t.times_ms),
                                    "clock_before_mhz": before, "clock_after_mhz": clock()})
                line.append(f"{name} {t.median_ms:.4f}")
            del rot
            print(f"round {rnd} {pid:60s} " + "  ".join(line), flush=True)
        _write(args.out, "bench_harness_stability.json", res)
    stability_report(res)
    return res


def stability_report(res: dict, against: Path | None = None) -> None:
    """Each problem's spread over the rounds (max/min - 1) per protocol; with `against` (a baseline JSONL measured in
    another call), how far that file's eager median is from the median of the rounds timed as the harness does."""
    from kb_data.io import read_jsonl_rows

    protocols = list(dict.fromkeys(r["protocol"] for r in res["rows"]))
    pids = list(dict.fromkeys(r["problem"] for r in res["rows"]))
    other = {r["problem_id"]: r for r in read_jsonl_rows(against)} if against else {}
    print(f"{'problem':60s} " + " ".join(f"{n:>14s}" for n in protocols) + "   (max/min - 1 over rounds)"
          + (f"   {against.name}: eager vs median of rounds" if against else ""))
    spreads, diffs = {n: [] for n in protocols}, []
    for pid in pids:
        cells, rounds = [], {}
        for name in protocols:
            xs = rounds[name] = [r["median_ms"] for r in res["rows"] if r["problem"] == pid and r["protocol"] == name]
            spreads[name].append((max(xs) / min(xs) - 1, statistics.median(xs)))
            cells.append(f"{spreads[name][-1][0]:14.1%}")
        row = other.get(pid)
        if row and row.get("eager_ms"):
            m = statistics.median(rounds[protocols[0]])
            diffs.append((row["eager_ms"] / m - 1, m))
            cells.append(f"   {m:.4f} -> {row['eager_ms']:.4f} ms {diffs[-1][0]:+.1%}")
        print(f"{pid:60s} " + " ".join(cells))
    for name, xs in list(spreads.items()) + ([("against", diffs)] if against else []):
        over = [abs(x) for x, ms in xs if ms > 0.1]
        print(f"{name:14s} median spread {statistics.median([abs(x) for x, _ in xs]):.1%}, under 3%: "
              f"{sum(abs(x) < 0.03 for x, _ in xs)}/{len(xs)}; problems over 0.1 ms: {sum(x < 0.03 for x in over)}/{len(over)}")


HOST_PROBE = r"""
import json, os, statistics, sys, time
cpus = json.loads(sys.argv[1])
if cpus:
    os.sched_setaffinity(0, cpus)
ran_on = set()
def where():
    with open("/proc/self/stat") as f:
        ran_on.add(int(f.read().rsplit(")", 1)[1].split()[36]))  # field 39: the CPU it last ran on
t0 = time.perf_counter(); sum(range(3_000_000)); py_ms = (time.perf_counter() - t0) * 1e3
where()
import torch
from kb_data.harness import reference as execute, timing
from kb_data.problems import ProblemSet, exec_problem_code
device = torch.device("cuda:0")
execute.use_gpu(device, {"versions": {}})
out = {"allowed": sorted(os.sched_getaffinity(0)), "py_loop_ms": py_ms, "calibration": timing.calibrate(device)}
x = torch.zeros(1, device=device)
for _ in range(3):
    t0 = time.perf_counter()
    for _ in range(1000):
        y = x + 1
    out.setdefault("launch_us", []).append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize(); where()
out["launch_us"] = min(out["launch_us"])
for pid, compiled in (("v3/level1/63_conv_standard_2D__square_input__square_kernel", False), ("v3/level1/40_LayerNorm", True)):
    p = ProblemSet().load(pid); mod = exec_problem_code(p.code, pid)
    model = execute.build_reference(mod, p.rules, device, 0)
    if compiled:
        model = torch.compile(model, mode=p.rules["compile_mode"])
    rot = execute.RotatingInputs(mod, p.rules, device, {})
    t = execute.time_model(model, rot, p.rules, device, {})
    out[pid.split("/")[-1][:24] + ("/compile" if compiled else "/eager")] = [t.median_ms, t.p10_ms, t.p90_ms]
    where()
out["ran_on"] = sorted(ran_on)
print("RESULT " + json.dumps(out))
"""


def _fresh_process(script: str, arg) -> dict:
    """`script` run in a new interpreter with json(arg) as argv[1]: the dict it prints after RESULT, or its error."""
    p = subprocess.run([sys.executable, "-c", script, json.dumps(arg)], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    return json.loads(line[-1][7:]) if line else {"error": p.stderr[-800:]}


def host(args) -> dict:
    """Fresh processes, as the sweep's chunks get: --repeats left to the scheduler, then one pinned to each CPU."""
    import os

    arms = [("free", []) for _ in range(args.repeats)] + [(f"cpu{c}", [c]) for c in sorted(os.sched_getaffinity(0))]
    runs = []
    for name, cpus in arms:
        r = _fresh_process(HOST_PROBE, cpus)
        r["arm"] = name
        runs.append(r)
        if "error" in r:
            print(f"{name:6s} failed: {r['error']}", flush=True)
            continue
        probs = "  ".join(f"{k} {v[0]:.4f}" for k, v in r.items() if isinstance(v, list) and k.endswith(("eager", "compile")))
        print(f"{name:6s} ran on {r['ran_on']}  py {r['py_loop_ms']:.1f} ms  launch {r['launch_us']:.2f} us  "
              f"cal launch {r['calibration']['launch_ms']:.3f} copy {r['calibration']['copy_ms']:.4f}  {probs}", flush=True)
        _write(args.out, "bench_harness_host.json", runs)
    host_report(runs)
    return {"runs": runs}


def _spearman(xs: list, ys: list) -> float:
    """Rank correlation (the figures are continuous: no ties to share ranks)."""
    def ranks(v):
        r = [0] * len(v)
        for k, i in enumerate(sorted(range(len(v)), key=v.__getitem__)):
            r[i] = k
        return r
    rx, ry, mid = ranks(xs), ranks(ys), (len(xs) - 1) / 2
    return sum((a - mid) * (b - mid) for a, b in zip(rx, ry)) / sum((a - mid) ** 2 for a in rx)


def host_report(runs) -> None:
    """Over the processes of a host run: each figure's min, max and max/min, and how the figures move together."""
    ok = [r for r in (runs["runs"] if isinstance(runs, dict) else runs) if "error" not in r]
    figures = {"launch_us": [r["launch_us"] for r in ok],
               "calibration launch_ms": [r["calibration"]["launch_ms"] for r in ok],
               "py_loop_ms": [r["py_loop_ms"] for r in ok]}
    figures.update({k: [r[k][0] for r in ok] for k in ok[0] if k.endswith(("/eager", "/compile"))} if ok else {})
    print(f"{len(ok)} processes ({sum(r['arm'] == 'free' for r in ok)} free, the rest pinned to one CPU each)")
    for name, xs in figures.items():
        print(f"{name:36s} min {min(xs):9.4f}  max {max(xs):9.4f}  max/min {max(xs) / min(xs):.2f}")
    names = list(figures)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            print(f"spearman {a} ~ {b}: {_spearman(figures[a], figures[b]):.2f}")


SHARE_PROBE = r"""
import json, sys
import torch
from kb_data.harness import reference as execute, timing
from kb_data.problems import ProblemSet, exec_problem_code
device = torch.device("cuda:0")
execute.use_gpu(device, {"versions": {}})
out = {"calibration": timing.calibrate(device), "problems": {}}
for pid in json.loads(sys.argv[1]):
    p = ProblemSet().load(pid); mod = exec_problem_code(p.code, pid)
    ref = execute.build_reference(mod, p.rules, device, 0)
    rot = execute.RotatingInputs(mod, p.rules, device, {})
    kinds = [("eager", ref)] + ([("compile", torch.compile(ref, mode=p.rules["compile_mode"]))] if p.suite == "v3" else [])
    res = {}
    for kind, model in kinds:
        graded = execute.time_model(model, rot, p.rules, device, {}).median_ms
        res[kind] = [graded, execute.time_model_gpu_alone(model, rot, p.rules, device).median_ms]
    out["problems"][pid] = res
    del ref, rot, kinds
    torch.cuda.empty_cache()
print("RESULT " + json.dumps(out))
"""

REPEAT_SUBSET = [f"v3/level1/{p}" for p in ("1_Square_matrix_multiplication_", "2_Standard_matrix_multiplication_",
                 "9_Tall_skinny_matrix_multiplication_", "36_RMSNorm_", "40_LayerNorm", "42_Max_Pooling_2D",
                 "63_conv_standard_2D__square_input__square_kernel")] + [
                 f"v3/level2/{p}" for p in ("6_Conv3d_Softmax_MaxPool_MaxPool", "17_Conv2d_InstanceNorm_Divide",
                 "37_Matmul_Swish_Sum_GroupNorm", "52_Conv2d_Activation_BatchNorm", "85_Conv2d_GroupNorm_Scale_MaxPool_Clamp")]


def host_share(args) -> dict:
    """Each problem's median as graded and with the host out of the interval, in --repeats fresh processes."""
    ids = args.problems.split(",") if args.problems else REPEAT_SUBSET
    runs = []
    for k in range(args.repeats):
        r = _fresh_process(SHARE_PROBE, ids)
        runs.append(r)
        _write(args.out, "bench_harness_host_share.json", runs)
        print(f"process {k}: " + (f"failed: {r['error']}" if "error" in r else f"calibration {r['calibration']}"), flush=True)
    host_share_report(runs)
    return {"runs": runs}


def host_share_report(runs) -> None:
    ok = [r for r in (runs["runs"] if isinstance(runs, dict) else runs) if "error" not in r]
    print(f"{'problem':58s} {'kind':8s} {'graded ms (per process)':34s} {'GPU alone ms':30s} host share  spread graded / alone")
    for pid in (ok[0]["problems"] if ok else []):
        for kind in ok[0]["problems"][pid]:
            pairs = [r["problems"][pid][kind] for r in ok if kind in r["problems"].get(pid, {})]
            graded, alone = [g for g, _ in pairs], [a for _, a in pairs]
            share = statistics.median(1 - a / g for g, a in pairs)
            spread = lambda xs: max(xs) / min(xs) - 1
            print(f"{pid:58s} {kind:8s} {' '.join('%.4f' % g for g in graded):34s} {' '.join('%.4f' % a for a in alone):30s} "
                  f"{share:8.1%}  {spread(graded):6.1%} / {spread(alone):6.1%}")


# The reference under torch.compile as a v3 submission (`Model`, the reference's state-dict keys). "module": compiled as
# the harness compiles the paired reference, torch.compile of a module: a shallow copy of the submission that shares its
# parameter, buffer and submodule dicts (so loaded weights reach it) and runs the reference's forward, kept out of the
# state dict. "method": torch.compile of the bound forward, a shorter call path (fewer guards) than a module's.
def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["overhead", "pool", "scale", "tilt", "pairing", "stability", "host", "host-share"])
    ap.add_argument("--out", type=Path, default=Path("bench-out"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--naive", type=int, default=10)
    ap.add_argument("--baselines", type=Path)
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--problems", help="pairing, stability, host-share: comma-separated problem ids")
    ap.add_argument("--report", type=Path, help="pairing, stability, host, host-share: print the report of a saved run (.json or .json.gz) "
                    "and exit (stability: with --baselines, also against that file's eager medians)")
    ap.add_argument("--per-gpu", type=int, default=30)
    ap.add_argument("--gpus", type=lambda v: [int(x) for x in v.split(",")], default=[4, 2, 1])
    args = ap.parse_args()
    if args.what == "stability" and args.report:
        return stability_report(json.loads(args.report.read_text()), args.baselines)
    if args.what == "host" and args.report:
        return host_report(json.loads(args.report.read_text()))
    if args.what == "host-share" and args.report:
        return host_share_report(json.loads(args.report.read_text()))
    if args.what == "pairing" and args.report:
        import gzip

        opener = gzip.open if args.report.suffix == ".gz" else open
        with opener(args.report, "rt", encoding="utf-8") as f:
            return pairing_report(json.load(f))
    res = {"overhead": overhead, "pool": pool, "scale": scale, "tilt": tilt, "pairing": pairing, "stability": stability,
           "host": host, "host-share": host_share}[args.what](args)
    _write(args.out, f"bench_harness_{args.what}.json", res)


if __name__ == "__main__":
    main()
