"""A round trip of timed calls to the candidate, and what one costs it: a batch's message (each call's input and
output slots), the batch sent behind the gate, its inputs written once it is queued, its reply and outputs taken in,
with the sandbox's CPU clocks and the kernel's samples running from before the inputs are written until the outputs
are copied; and the no-work calibration, made before the submission loads, that prices a round trip on those clocks.
Everything here runs in the judge's process.
"""
from __future__ import annotations

import secrets
import statistics

from kb_data.harness import channel, timing
from kb_data.harness.channel import ChannelError
from kb_data.harness.reference import Stage
from kb_data.harness.sampler import SamplerUnavailable
from kb_data.harness.session import cpu_threads, flag

CALIBRATION_CALLS, CALIBRATION_CALLS_CPU = 48, 16  # no-work calls timed before the submission loads
CALIBRATION_CALLS_HOST = 32  # ... and on a GPU, with the gate opened before they are queued


def prefix(c: int) -> str:
    """The slots of a batch's call `c`; the first call's are the ones every other command uses (no extra memory)."""
    return f"b{c}." if c else ""


def batch_msg(cand, ctx, inputs: list, rngs: list, device) -> tuple[dict, object]:
    """A batch of timed calls, one per inputs of `inputs`: the message that names each call's slots, and fill(),
    which writes the inputs there (the round trip calls it only once the batch is queued behind the gate)."""
    msg = {"cmd": "timed", "calls": [{"inputs": cand.slot_inputs(x, prefix(c), write=False), "rng": rng,
                                      "outputs": cand.out_slots(ctx["out_meta"], prefix(c))}
                                     for c, (x, rng) in enumerate(zip(inputs, rngs))]}

    def fill():
        for c, x in enumerate(inputs):
            cand.slot_inputs(x, prefix(c), sync=False)
        timing.synchronize(device)

    return msg, fill


def round_trip(cand, msg: dict, stage: str, fill, received=None) -> tuple[dict, float, float | None, bool, dict | None]:
    """A batch of timed calls behind the gate: sent, queued by the candidate, its inputs written (`fill`), the gate
    opened, answered, and `received(reply)` (the outputs copied, returned by call for the flush watch). Returns (reply,
    the judge's wall ms from the gate's opening, the sandbox's CPU ms or None, whether the batch said it was queued
    before the gate opened, its timing threads' CPU ms by name or None). Nothing of the batch can start on its inputs
    before the gate opens: they are not there yet. The sandbox's clocks and samples run from before its inputs are
    written until its outputs are copied."""
    mark = {}

    def ready(held: bool):
        if value is not None:  # a timed batch with a flush buffer to watch, and its output slots, through the batch
            mark["watch"] = cand.flush_watcher(value, [[cand.arena.slots[f"{prefix(c)}out{k}"][1]
                                                        for k in range(len(call["outputs"]))]
                                                       for c, call in enumerate(msg["calls"])])
            if mark["watch"] is not None:
                mark["watch"].start()
        sampler = cand.sampling()
        if sampler is not None:  # every thread of the sandbox, sampled until the outputs are copied
            try:
                sampler.start(cand.sb.pids())
                mark["sampler"] = sampler
            except SamplerUnavailable as e:
                cand.sampler_error = str(e)
        # read as the end's are, settled: what a thread still on its CPU ran before now is charged only as it leaves
        # it, inside the batch's span, where the sampler's clocks, started just before, do not have it
        mark["held"], (mark["cpu"], mark["threads"]) = held, cand.settled_clocks()
        fill()
        mark["t"] = timing._perf_counter()

    msg["gate"] = cand.next_gate()
    # call c of the batch flushes with value + c (under 2**31: int32)
    value = msg["flush_value"] = secrets.randbits(30) | 1 if stage == "timing" and cand.flush_watch else None
    c1 = f1 = reply = taken = None
    try:
        reply = cand.request(msg, stage, ready=ready)
        end = timing._perf_counter()
        if received is not None and "t" in mark:
            taken = received(reply)
        c1, f1 = cand.settled_clocks()  # before the samples are read
    finally:
        cgroup_ms = None if mark.get("cpu") is None or c1 is None else c1 - mark["cpu"]
        cand.add_samples(stage, mark.get("sampler"), len(msg["calls"]), cgroup_ms)
        cand.end_flush_watch(mark.get("watch"), reply, len(msg["calls"]), taken)
    if "t" not in mark:
        why = f"{stage}: the candidate answered a batch of timed calls before its inputs were written"
        flag(cand.res, "timer_tampered", why)
        raise Stage("rejected", why)
    wall = (end - mark["t"]) * 1e3
    cand.last_round_trip_ms = wall
    return (reply, wall, None if mark["cpu"] is None or c1 is None else c1 - mark["cpu"], mark["held"],
            None if mark["threads"] is None or f1 is None else {k: f1[k] - mark["threads"][k] for k in f1})


def batch_replies(reply: dict, k: int) -> list[dict]:
    replies = channel.field(reply, "calls", list, max_len=k)
    if len(replies) != k or not all(isinstance(r, dict) for r in replies):
        raise ChannelError(f"a batch of {k} timed calls needs {k} replies (objects), got {len(replies)}")
    return replies


def take_replies(cand, ctx: dict, calls: list, reply: dict) -> list:
    """A timed batch's reply taken in: each call's claim and flush time, and its outputs, copied (returned, by call)."""
    for c, (t, r) in enumerate(zip(calls, batch_replies(reply, len(calls)))):
        t["reply"], t["ms"] = r, channel.field(r, "ms", float)
        t["flush"] = channel.field(r, "flush_ms", float, optional=True)
        t["outs"], t["why"] = cand.outputs(r, ctx["out_meta"], prefix(c))
        cand.check_input_slots(t["inputs"], prefix(c))
    return [t["outs"] for t in calls]


def calibrate(cand, inputs, ctx, device, rules, job) -> float:
    """What a timed call's round trip costs beyond its own time, measured in the candidate's process before the
    submission is loaded there (so it cannot inflate it): a model that does no work, timed as every call is, in
    batches of the timing loop's size. On a GPU its flush median is also the side-stream check's yardstick."""
    page = cand.arena.gate_page() if device.type == "cuda" else None
    reply = cand.request({"cmd": "calibrate", "device": str(device), "l2_flush": rules["l2_flush"],
                          "threads": cpu_threads(), "l2_flush_bytes": job.get("l2_flush_bytes"),
                          "outputs": cand.out_slots(ctx["out_meta"]),
                          **({"gate": page[0].to_msg()} if page else {})}, "calibration")
    if device.type == "cpu":
        cand.watch_threads(reply.get("threads"))
    if device.type == "cpu" and rules["l2_flush"]:  # in the forward thread's process, which watch_threads found
        cand.watch_flush_buffer(reply.get("flush_buffer"))
    if page is not None:
        gate = channel.field(reply, "gate", str, optional=True, max_len=500) or "unavailable: no answer"
        if gate == "ok":
            cand.gate_page = page[1]
        else:  # the host's driver, found before the submission loaded: the wall clock then includes the host's pace
            ctx["gate"] = gate
    k = ctx["batch"]
    msg, fill = batch_msg(cand, ctx, [inputs] * k, [0] * k, device)
    extra, flushes, cpu, threads, phases = [], [], [], [], []
    calls = CALIBRATION_CALLS if device.type == "cuda" else CALIBRATION_CALLS_CPU
    interrupts, t0 = host_interrupts() if device.type == "cpu" else None, timing._perf_counter()
    for reply, replies, wall, cpu_ms, thread_ms in _calibration_batches(cand, msg, fill, calls, k):
        extra.append((wall - sum(channel.field(r, "ms", float) for r in replies)) / k)
        if (ph := gpu_phases(reply, replies, wall)) is not None:
            phases.append(ph)
        flushes += [fl for r in replies if (fl := channel.field(r, "flush_ms", float, optional=True)) is not None]
        if cpu_ms is not None:
            cpu.append(cpu_ms / k)
        if thread_ms is not None:
            threads.append((k, sandbox_clocks(cpu_ms, thread_ms)))
    after = host_interrupts() if interrupts is not None else None
    if after is not None:  # each CPU's rate before the submission loaded: the frozen reference's yardstick (timed.py)
        seconds = max(timing._perf_counter() - t0, 1e-3)
        ctx["interrupts_per_s"] = [(a - b) / seconds for b, a in zip(interrupts, after)]
    ctx["calibration_flush_ms"] = statistics.median(flushes) if flushes else None
    ctx["calibration_phases"] = median_phases(phases)
    ctx["overhead_cpu_ms"] = statistics.median(cpu) if cpu else None  # a no-work call's CPU time in the sandbox
    if cand.thread_clocks is not None and threads:
        ctx["overhead_threads"] = _thread_overhead(cand, inputs, ctx, device, threads)
    if cand.gate_page is not None:
        # a batch that was not all queued when its gate opened ran at the host's pace: what the harness does between
        # two calls is then on the clock too; measured with the gate opened before the batch is queued
        ctx["overhead_host_ms"] = statistics.median(
            (wall - sum(channel.field(r, "ms", float) for r in replies)) / k
            for _, replies, wall, _, _ in _calibration_batches(cand, {**msg, "open_first": True}, fill,
                                                            CALIBRATION_CALLS_HOST, k))
    return statistics.median(extra)


def _thread_overhead(cand, inputs, ctx, device, measured: list) -> dict | None:
    """What no-work batches cost each of the candidate's timing threads (the forward's: its flushes and the glue
    between its calls; the aside one's: the copies and the frees), as {thread: (ms a batch, ms a call)}: a
    least-squares line through the calibration's batches of the loop's size (`measured`, (calls, {thread: ms}) each),
    one more of them and two each of 1 and 3 calls, the higher reading at each size (a higher figure only lowers the
    floor). A batch's share is about as large as a call's, so a batch of few calls (a grading of few trials) must not
    be held to the per-call figure of a long one. Sampled as the timed batches are (the kernel's sampling costs the
    forward thread 0.06-0.1 ms a call). None when the clocks gave no reading."""
    k = measured[0][0]
    got: dict[int, dict] = {}
    for n, threads in measured + [(n, None) for n in (1, 3, 1, 3, k) if n <= k]:
        if threads is None:
            msg, fill = batch_msg(cand, ctx, [inputs] * n, [0] * n, device)
            _, _, cpu_ms, _, thread_ms = round_trip(cand, msg, "calibration", fill)
            if thread_ms is None:
                return None
            threads = sandbox_clocks(cpu_ms, thread_ms)
        got[n] = {name: max(got.get(n, {}).get(name, 0.0), ms) for name, ms in threads.items()}
    return {name: _line(list(got), [got[n][name] for n in got]) for name in got[k]
            if all(name in got[n] for n in got)}


def sandbox_clocks(cpu_ms: float | None, thread_ms: dict) -> dict:
    """A batch's timing threads' CPU ms by name, and "rest": the sandbox cgroup's CPU account less theirs (every
    other thread and process of the sandbox), where there is that account."""
    return thread_ms if cpu_ms is None else {**thread_ms, "rest": cpu_ms - sum(thread_ms.values())}


def _line(calls: list, ms: list) -> tuple[float, float]:
    """(ms a batch, ms a call) of batches of `calls` calls that took `ms`: with one size only (a loop of one call),
    all of it a call's."""
    if len(calls) < 2:
        return 0.0, ms[0] / calls[0]
    per_call, per_batch = statistics.linear_regression(calls, ms)
    if per_call < 0:
        per_call, per_batch = 0.0, statistics.fmean(ms)
    return max(per_batch, 0.0), per_call


def _calibration_batches(cand, msg: dict, fill, calls: int, k: int):
    """(reply, its calls' replies, wall ms, the sandbox's CPU ms, its timing threads' CPU ms) of the no-work batches
    covering `calls` calls, after one that warms up."""
    for b in range(1 + -(-calls // k)):
        reply, wall, cpu_ms, _, thread_ms = round_trip(cand, msg, "calibration", fill)
        replies = batch_replies(reply, k)
        if b:
            yield reply, replies, wall, cpu_ms, thread_ms


def gpu_phases(reply: dict, replies: list, wall_ms: float) -> dict | None:
    """Where a GPU batch's round trip went, ms a call, by the candidate's own events (Timer.phases): evidence of where
    the judge's clock and the claims part, never a verdict (the figures are the candidate's). "outside": the round
    trip past the GPU's span of the batch (the channel, the gate, the host's wake-ups); "copies": the harness's input
    and output copies; "rest": the span past the copies, the claimed calls and their flushes. None without them."""
    ph, k = reply.get("phases"), len(replies)
    if not isinstance(ph, dict) or not k:
        return None
    try:
        copies = [v for key in ("prepare", "deliver") for v in channel.float_list(ph, key, max_items=k)]
        span = channel.field(ph, "span", float)
        claimed = sum(channel.field(r, "ms", float) + (channel.field(r, "flush_ms", float, optional=True) or 0.0)
                      for r in replies)
    except ChannelError:
        return None
    return {"outside": (wall_ms - span) / k, "copies": sum(copies) / k, "rest": (span - sum(copies) - claimed) / k}


def median_phases(phases: list) -> dict | None:
    """Each figure's median over batches (gpu_phases), or None for none."""
    return {key: statistics.median(p[key] for p in phases) for key in phases[0]} if phases else None


def host_interrupts() -> list[int] | None:
    """Timer interrupts each CPU of the host has served since boot (/proc/interrupts, interrupt_counts); None where
    they cannot be read."""
    try:
        with open("/proc/interrupts", "rb") as f:
            return interrupt_counts(f.read())
    except OSError:
        return None


def interrupt_counts(table: bytes) -> list[int] | None:
    """Per-CPU sums of a /proc/interrupts table's timer rows (those that name a timer: x86's local timer, an arm64
    arch_timer, a hypervisor's stimer): what the timers a frozen sandbox armed raise. Other rows are the host's:
    one CPU's wake-ups and cross-calls for running code (the judge's own thread pool) and devices (the test suite's
    disk writes reached 10700 virtio-blk interrupts a second on one CPU over 5 ms, session 36). None for a table
    without CPUs or without a timer row."""
    lines = table.splitlines()
    cpus = len(lines[0].split()) if lines else 0
    per_cpu, timers = [0] * cpus, 0
    for line in lines[1:]:
        counts = line.split()[1:cpus + 1]
        if len(counts) == cpus and all(c.isdigit() for c in counts) and b"timer" in line.lower():
            per_cpu, timers = [a + int(c) for a, c in zip(per_cpu, counts)], timers + 1
    return per_cpu if cpus and timers else None
