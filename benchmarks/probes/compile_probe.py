"""Probe: why does torch.compile fail ("unspecified launch failure") inside the candidate's sandbox on a GPU?

Runs the same compiled GELU (default mode, then reduce-overhead) in: this process's fresh child with no sandbox,
then a Sandbox at each level, then the candidate's own steps (calibrate, then load and forward through the
channel) at each level. Prints one JSON line per arm with the full traceback of any failure.
Usage (GPU machine): python benchmarks/probes/compile_probe.py
"""
from __future__ import annotations

import json
import os
import sys
import traceback


def compiled_gelu(mode: str | None) -> dict:
    import torch

    try:
        torch._dynamo.reset()  # a fresh compile each time (the cache is keyed on gelu's code)
        x = torch.randn(64, 4096, device="cuda")
        f = torch.compile(torch.nn.functional.gelu, **({"mode": mode} if mode else {}))
        for _ in range(3):
            y = f(x)
        torch.cuda.synchronize()
        return {"ok": bool(torch.allclose(y, torch.nn.functional.gelu(x), atol=1e-5)),
                "pid": os.getpid(), "uid": os.getuid()}
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


def inline_arm(variant: str) -> dict:
    """grade() with the judge run in this (spawned) process instead of a forkserver child, and one part of the
    judge's sequence left out: "plain" (nothing), "nocal" (no calibration), "nopair" (no paired reference)."""
    import kb_data.harness.grade as grade_mod
    import kb_data.harness.judge as judge_mod
    from kb_data.harness.grade import Options, grade
    from kb_data.problems import ProblemSet
    from tests.corpus import entries

    grade_mod.run_isolated = lambda run, job, timeout_s: run(job)
    if variant == "nocal":
        def no_calibration(cand, inputs, ctx, device, rules, job):
            ctx["calibration_flush_ms"] = None
            return 0.0
        judge_mod.calibrate = no_calibration
    out = {}
    for entry in ("torch_compile_gelu", "compiled_reference_layernorm"):
        e = next(x for x in entries() if x.path.stem == entry)
        rec, _ = grade(ProblemSet().load(e.problem), e.path.read_text(), name=str(e.path),
                       options=Options(device="cuda:0", sandbox="none", require_custom_kernel=False,
                                       measure_baseline=False, pair_reference=variant != "nopair"))
        out[entry] = {"status": rec.status, "error": (rec.error or "")[:600], "stages": rec.harness_seconds}
    return out


def main() -> None:
    sys.path.insert(0, os.getcwd())
    import multiprocessing as mp

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
        elif arm.startswith("inline-"):
            try:
                with mp.get_context("spawn").Pool(1) as pool:
                    res = pool.apply(inline_arm, (arm.split("-", 1)[1],))
            except Exception as e:
                res = {"probe_error": "".join(traceback.format_exception(e))[-3000:]}
        elif arm.startswith("grade-"):
            res = {e: grade_arm(arm.split("-", 1)[1], e) for e in ("torch_compile_gelu", "compiled_reference_layernorm")}
        elif arm == "strong-1thread":
            res = sandbox_arm("strong", {"TORCHINDUCTOR_COMPILE_THREADS": "1"})
        else:
            res = sandbox_arm(arm)
        print(json.dumps({"arm": arm, "result": res}), flush=True)


if __name__ == "__main__":
    main()
