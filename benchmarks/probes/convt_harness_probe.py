"""Session 31 probe (ready, not yet run): is v0.1 71_conv_transposed_2D's slow judge (11.6-16.7 ms against the
candidate's steady 8.3-8.5 ms on an H100, session 30) the harness's way of timing or the judge process's state?
One fresh process: the reference built as the judge builds it, timed (1) by a plain event loop, (2) by the harness's
`time_model` (flush, rotating inputs: the figure `ref_alone_ms` comes from), (3) by `time_model_gpu_alone`; then one
call's kernels with their grid and block (cuDNN may pick another FFT variant under the same names). Run it in several
fresh processes: `python benchmarks/probes/convt_harness_probe.py [cuda|cpu] [TRIALS]` (one JSON line each)."""
import json
import sys
import tempfile

import torch

from kb_data.harness.reference import RotatingInputs, build_reference, time_model, time_model_gpu_alone, use_gpu
from kb_data.problems import ProblemSet, default_problems_root
from kb_data.rules import rules_for

device = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cuda:0")
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 30
problem = ProblemSet(default_problems_root()).load("v0.1/level1/71_conv_transposed_2D__asymmetric_input__square_kernel")
mod, rules = problem.module, rules_for("v0.1")
if device.type == "cuda":
    use_gpu(device, {"versions": {}})
ref = build_reference(mod, rules, device, init_seed=rules["seeds"][0])
job = {"warmup": 3, "trials": trials}
rot = RotatingInputs(mod, rules, device, job)
out = {"device": str(device), "trials": trials}
with torch.no_grad():
    for _ in range(3):
        ref(*rot.work)
    if device.type == "cuda":
        torch.cuda.synchronize()
        times = []
        for _ in range(trials):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            ref(*rot.work)
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b))
        out["plain_median_ms"] = sorted(times)[len(times) // 2]
        import time
        host = []  # the host's time to queue one call, the GPU kept busy ahead of it
        for _ in range(trials):
            torch.cuda._sleep(200_000_000)
            t0 = time.perf_counter()
            ref(*rot.work)
            host.append((time.perf_counter() - t0) * 1e3)
            torch.cuda.synchronize()
        out["host_queue_median_ms"] = sorted(host)[len(host) // 2]
t = time_model(ref, rot, rules, device, job)
out["time_model_median_ms"], out["time_model_p10_p90_ms"] = t.median_ms, [t.p10_ms, t.p90_ms]
if device.type == "cuda":
    g = time_model_gpu_alone(ref, rot, rules, device)
    out["gpu_alone_median_ms"], out["gpu_alone_error"] = g.median_ms, g.error
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof, torch.no_grad():
        ref(*rot.work)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    out["kernels"] = [{"name": e["name"][:80], "us": e.get("dur"), "grid": e.get("args", {}).get("grid"),
                       "block": e.get("args", {}).get("block")}
                      for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]
print(json.dumps(out))
