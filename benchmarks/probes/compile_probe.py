"""Probe: why does torch.compile fail ("unspecified launch failure") inside the candidate's sandbox on a GPU?

Runs the same compiled GELU (default mode, then reduce-overhead; PROBE_OP=conv: a convolution and a constant
mask) in: this process's fresh child with no sandbox, then a Sandbox at each level, then the candidate's own
steps (calibrate, then load and forward through the channel) at each level. Prints one JSON line per arm with
the full traceback of any failure.
Usage (GPU machine): python benchmarks/probes/compile_probe.py
"""
from __future__ import annotations

import json
import os
import sys
import traceback


PROBE_OP = os.environ.get("PROBE_OP")  # read here: a sandboxed child, forked from this process, has its env scrubbed


def compiled_gelu(mode: str | None) -> dict:
    """A compiled function run three times against its eager result: GELU (Triton only), or with PROBE_OP=conv a
    convolution and a folded constant mask (cuDNN and device constants, what failed in the candidate on the H200)."""
    import torch

    try:
        torch._dynamo.reset()  # a fresh compile each time (the cache is keyed on the function's code)
        if PROBE_OP == "conv":
            w = torch.randn(16, 8, 3, 3, device="cuda")
            x = torch.randn(8, 8, 64, 64, device="cuda")

            def fn(x):
                y = torch.nn.functional.conv2d(x, w, padding=1)
                mask = torch.triu(torch.ones(64, 64, dtype=torch.bool, device=x.device), diagonal=1)
                return y.masked_fill(mask, float("-inf")).softmax(-1)
        else:
            x = torch.randn(64, 4096, device="cuda")
            fn = torch.nn.functional.gelu
        f = torch.compile(fn, **({"mode": mode} if mode else {}))
        for _ in range(3):
            y = f(x)
        torch.cuda.synchronize()
        return {"ok": bool(torch.allclose(y, fn(x), atol=1e-5)), "pid": os.getpid(), "uid": os.getuid()}
    except BaseException as e:
        return {"ok": False, "error": "".join(traceback.format_exception(e))[-6000:]}


def _serve_probe(sock):
    from kb_data.harness import channel

    out = {m or "default": compiled_gelu(m) for m in (None, "reduce-overhead")}
    channel.send(sock, out)


def _serve_steps(sock):
    """The candidate's own steps before its first forward, one at a time, each followed by a compiled GELU."""
    import torch

    from kb_data.harness import channel, timing

    out = {}
    torch.cuda.set_device(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    out["set_device"] = compiled_gelu(None)
    timer = timing.Timer(torch.device("cuda:0"), l2_flush=True)
    timer.flush()
    torch.cuda.synchronize()
    out["timer"] = compiled_gelu(None)
    msg = channel.recv(sock)  # the parent's slot, made after the fork as the judge's are
    slots = {}
    src = channel.open_slot(channel.SlotDesc.from_msg(msg["slot"]), slots)
    mine = src.clone()
    torch.cuda.synchronize()
    out["ipc_open"] = {**compiled_gelu(None), "sum": float(mine.sum())}
    torch.manual_seed(1234567)
    out["manual_seed"] = compiled_gelu(None)
    channel.send(sock, out)


def _serve_server_steps(sock):
    """The real candidate server, driven by the parent command by command; a fresh compiled GELU after each."""
    from kb_data.harness import channel
    from kb_data.harness.candidate import Server

    srv = Server(sock)
    while True:
        msg = channel.recv(sock)
        if msg.get("cmd") == "exit":
            return
        try:
            reply = getattr(srv, f"cmd_{msg['cmd']}")(msg)
        except BaseException as e:
            reply = {"ok": False, "error": "".join(traceback.format_exception(e))[-3000:]}
        out = {k: v for k, v in reply.items() if k in ("ok", "error", "ms")}
        out["probe"] = compiled_gelu(None)
        channel.send(sock, out)


def server_arm(level: str) -> dict:
    """calibrate, timed, load (the torch.compile corpus entry), forward: as the judge sends them."""
    import torch

    from kb_data.harness import channel
    from kb_data.harness.sandbox import Limits, Sandbox
    from kb_data.io import lock_dir
    from kb_data.problems import ProblemSet

    problem = ProblemSet().load("v3/level1/26_GELU_")
    code = open("tests/corpus/adversarial/torch_compile_gelu.py").read()
    sb = Sandbox(level, Limits(memory_bytes=16 << 30), "cuda:0", lock_dir())
    out = {}
    try:
        sb.start(_serve_server_steps)
        torch.zeros(1, device="cuda:0")
        arena = channel.SlotArena("cuda:0")
        d_in, t_in = arena.tensor("in0", torch.float32, [256, 16384])
        t_in.copy_(torch.randn(256, 16384, device="cuda:0"))
        d_out, _ = arena.tensor("out0", torch.float32, [256, 16384])
        torch.cuda.synchronize()
        io = {"inputs": [{"slot": d_in.to_msg()}], "outputs": [d_out.to_msg()], "rng": 12345}
        steps = [("calibrate", {"cmd": "calibrate", "device": "cuda:0", "l2_flush": True, "threads": 4,
                                "outputs": [d_out.to_msg()]}),
                 ("timed", {"cmd": "timed", "calls": [io]}),
                 ("load", {"cmd": "load", "code": code, "module_name": "submission.py", "problem_code": problem.code,
                           "problem_id": problem.problem_id, "device": "cuda:0", "l2_flush": True,
                           "class_names": ["ModelNew", "Model"], "init_seed": None, "eval": False, "threads": 4}),
                 ("forward", {"cmd": "forward", **io})]
        for name, msg in steps:
            channel.send(sb.sock, msg)
            try:
                out[name] = channel.recv(sb.sock, timeout_s=300)
            except Exception as e:
                out[name] = {"channel_error": str(e), "log": sb.log_tail(4000)}
                break
        channel.send(sb.sock, {"cmd": "exit"})
        return out
    finally:
        sb.close()


def steps_arm(level: str, preload: str = "") -> dict:
    import importlib

    import torch

    if preload:  # what the judge's forkserver imported before forking the judge (and the judge the candidate)
        importlib.import_module(preload)

    from kb_data.harness import channel
    from kb_data.harness.sandbox import Limits, Sandbox
    from kb_data.io import lock_dir

    sb = Sandbox(level, Limits(memory_bytes=16 << 30), "cuda:0", lock_dir())
    try:
        sb.start(_serve_steps)
        torch.zeros(1, device="cuda:0")  # the judge's CUDA, after the fork
        arena = channel.SlotArena("cuda:0")
        desc, t = arena.tensor("in0", torch.float32, [256, 16384])
        t.copy_(torch.ones(256, 16384, device="cuda:0"))
        torch.cuda.synchronize()
        channel.send(sb.sock, {"slot": desc.to_msg()})
        return _reply(sb)
    finally:
        sb.close()


def _reply(sb) -> dict:
    from kb_data.harness import channel

    try:
        return channel.recv(sb.sock, timeout_s=300)
    except Exception as e:
        return {"channel_error": str(e), "log": sb.log_tail(6000)}


def sandbox_arm(level: str, env: dict | None = None) -> dict:
    from kb_data.harness.sandbox import Limits, Sandbox
    from kb_data.io import lock_dir

    sb = Sandbox(level, Limits(memory_bytes=16 << 30), "cuda:0", lock_dir(), extra_env=env)
    try:
        sb.start(_serve_probe)
        return _reply(sb)
    finally:
        sb.close()


def grade_arm(level: str, entry: str) -> dict:
    from kb_data.harness.grade import Options, grade
    from kb_data.problems import ProblemSet
    from tests.corpus import entries

    e = next(x for x in entries() if x.path.stem == entry)
    problem = ProblemSet().load(e.problem)
    rec, _ = grade(problem, e.path.read_text(), name=str(e.path),
                   options=Options(device="cuda:0", sandbox=level, require_custom_kernel=False, measure_baseline=False))
    return {"status": rec.status, "error": rec.error, "flags": rec.flags, "stages": rec.harness_seconds}


def captured_job(entry: str, level: str, device: str = "cuda:0") -> dict:
    """The job grade() hands its judge for a corpus entry (grade() initialises CUDA: run in a process of its own)."""
    import kb_data.harness.grade as grade_mod
    from kb_data.harness.grade import Options, grade
    from kb_data.harness.judge import judge
    from kb_data.problems import ProblemSet
    from tests.corpus import entries

    jobs, real = [], grade_mod.run_isolated

    def capture(run, job, timeout_s):
        if run is not judge:
            return real(run, job, timeout_s)  # the build stage
        jobs.append(job)
        return {"status": "crashed", "error": "captured by the probe"}

    grade_mod.run_isolated = capture
    e = next(x for x in entries() if x.path.stem == entry)
    grade(ProblemSet().load(e.problem), e.path.read_text(), name=str(e.path),
          options=Options(device=device, sandbox=level, require_custom_kernel=False, measure_baseline=False))
    return jobs[-1]


def judge_variant(variant: str, job: dict) -> dict:
    """The judge run directly in this fresh interpreter (never forked from the worker's forkserver), with one
    part of grade()'s sequence changed: fresh (nothing), nocal (no calibration calls), oneseed (one correctness
    seed, no secret one), nopair (no paired reference), blocking (CUDA_LAUNCH_BLOCKING=1 in the candidate),
    threads1 (TORCHINDUCTOR_COMPILE_THREADS=1 in the candidate)."""
    from kb_data.harness import judge as judge_mod, sandbox

    if variant == "nocal":
        def no_calibration(cand, inputs, ctx, device, rules, job):
            ctx["calibration_flush_ms"] = None
            return 0.0
        judge_mod.calibrate = no_calibration
    elif variant == "oneseed":
        job["rules"] = {**job["rules"], "seeds": job["rules"]["seeds"][:1], "secret_seed": False}
    elif variant == "nopair":
        job["pair_reference"] = False
    elif variant in ("blocking", "threads1"):
        key, scrubbed = ("CUDA_LAUNCH_BLOCKING" if variant == "blocking" else "TORCHINDUCTOR_COMPILE_THREADS"), sandbox._scrubbed_env
        sandbox._scrubbed_env = lambda work, device: {**scrubbed(work, device), key: "1"}
    res = judge_mod.judge(job)
    return {k: res.get(k) for k in ("status", "error", "flags", "stage_s")}


def isolated_variant(variant: str, job: dict) -> dict:
    """The judge through worker.run_isolated, as grade() runs it, from a worker context of another kind: spawn (a
    fresh interpreter per job), forkserver-bare (the forkserver imports nothing before it forks the judge),
    forkserver-torch (it imports torch only), forkserver (as shipped)."""
    import multiprocessing as mp

    from kb_data.harness import worker
    from kb_data.harness.judge import judge

    if variant == "spawn":
        worker._ctx = mp.get_context("spawn")
    elif variant.startswith("forkserver-"):
        worker._ctx = mp.get_context("forkserver")
        worker._ctx.set_forkserver_preload({"forkserver-bare": [], "forkserver-torch": ["torch"]}[variant])
    res = worker.run_isolated(judge, job, 600)
    return {k: res.get(k) for k in ("status", "error", "flags", "stage_s")}


def judge_arms(variants: list[str]) -> dict:
    import subprocess

    out = {}
    for entry in ("torch_compile_gelu", "compiled_reference_layernorm"):
        got = subprocess.run([sys.executable, __file__, "_capture", entry], capture_output=True, text=True, timeout=600)
        if got.returncode:
            out[entry] = {"capture_failed": got.stderr[-3000:]}
            continue
        job = got.stdout.strip().splitlines()[-1]
        for v in variants:
            how = "_isolated" if v == "spawn" or v.startswith("forkserver") else "_judge"
            run = subprocess.run([sys.executable, __file__, how, v], input=job, capture_output=True, text=True,
                                 timeout=600)
            lines = run.stdout.strip().splitlines()
            res = json.loads(lines[-1]) if run.returncode == 0 and lines else {"probe_error": run.stderr[-3000:]}
            if isinstance(res.get("error"), str):
                res["error"] = res["error"][:1500]
            out[f"{entry}/{v}"] = res
            print(json.dumps({"arm": f"judge-{v}", "entry": entry, "result": res}), flush=True)
    return out


def main() -> None:
    sys.path.insert(0, os.getcwd())
    import multiprocessing as mp

    if sys.argv[1:2] == ["_capture"]:
        print(json.dumps(captured_job(sys.argv[2], "strong", *sys.argv[3:4])))
        return
    if sys.argv[1:2] == ["_isolated"]:
        print(json.dumps(isolated_variant(sys.argv[2], json.loads(sys.stdin.read())), default=str))
        return
    if sys.argv[1:2] == ["_judge"]:
        print(json.dumps(judge_variant(sys.argv[2], json.loads(sys.stdin.read())), default=str))
        return
    arms = sys.argv[1:] or ["plain", "none", "process", "strong", "strong-1thread", "grade-none", "grade-process",
                            "grade-strong"]
    for arm in arms:
        if arm == "plain":  # a fresh interpreter: nothing of the harness
            with mp.get_context("spawn").Pool(1) as pool:
                res = {m or "default": pool.apply(compiled_gelu, (m,)) for m in (None, "reduce-overhead")}
        elif arm.startswith("server-"):
            with mp.get_context("spawn").Pool(1) as pool:
                res = pool.apply(server_arm, (arm.split("-", 1)[1],))
        elif arm.startswith("steps-"):  # the parent initialises CUDA: a spawned process of its own
            with mp.get_context("spawn").Pool(1) as pool:
                res = pool.apply(steps_arm, tuple(arm.split("-")[1:]))
        elif arm == "judge":  # the rest of the command line: the variants (judge_variant)
            judge_arms(sys.argv[sys.argv.index("judge") + 1:])
            break
        elif arm.startswith("parent-cuda-"):  # as an RL loop's process: CUDA in use here before grade() runs
            import torch

            before = dict(os.environ)
            keep = torch.zeros(1 << 20, device="cuda")
            res = {"env_added": {k: v for k, v in os.environ.items() if before.get(k) != v}, "held": keep.numel()}
            res.update({e: grade_arm(arm.split("-", 2)[2], e) for e in ("torch_compile_gelu", "compiled_reference_layernorm")})
        elif arm.startswith("grade-"):
            res = {e: grade_arm(arm.split("-", 1)[1], e) for e in ("torch_compile_gelu", "compiled_reference_layernorm")}
        elif arm == "strong-1thread":
            res = sandbox_arm("strong", {"TORCHINDUCTOR_COMPILE_THREADS": "1"})
        else:
            res = sandbox_arm(arm)
        print(json.dumps({"arm": arm, "result": res}), flush=True)


if __name__ == "__main__":
    main()
