"""The timing bound: each batch's claimed times against the judge's round trip, held and not held behind the gate,
the CPU's own account, the roofline, the calls per round trip."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

from kb_data.problems import ProblemSet
from tests.corpus import SMALL_PROBLEMS
from kb_data.schema import RunRecord
from kb_data.harness.grade import Options, grade
from tests.harness_support import GELU, HONEST_GELU, _grade


def test_every_batch_is_held_to_the_timing_bound_and_a_few_stalls_are_forgiven():
    """A stall of the judge's host inflates some batches' round trips, never shrinks one: an honest candidate with
    one stalled batch of three is not `timer_tampered`. A claim under the truth in most batches is, and so is one
    batch's claim over its whole round trip (red team, 2026-12-02: one over-claimed batch, then 0.25x claims, passed
    the bound that only the batch most in the candidate's favour decided, at 5x on GELU)."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    cpu, ctx = torch.device("cpu"), {"overhead_ms": 0.2}
    batch = lambda wall, claim, k=4, counted=True: timed_loop._batch_bound(wall * k, k, claim, counted, ctx, CHECKS,
                                                                          cpu, True)

    def bound(*batches):
        res = {"flags": [], "flag_details": {}}
        timed_loop._bound_claims(res, list(batches), ctx, CHECKS)  # ms per call: round trip, claim
        return res

    res = bound(batch(2.1, 1.0), batch(250.0, 1.1), batch(2.3, 1.0))
    assert res["flags"] == [] and res["flag_details"]["timing_bound"]["over_bound"] == 1
    assert bound(batch(40.2, 0.01), batch(41.0, 0.01), batch(40.5, 0.02))["flags"] == ["timer_tampered"]
    whitewash = bound(batch(40.0, 800.0, counted=False), batch(40.2, 10.0), batch(40.5, 10.0), batch(40.1, 10.0))
    assert whitewash["flags"] == ["timer_tampered"] and whitewash["flag_details"]["timing_bound"]["over_round_trip"] == 1
    plausible_first = bound(batch(40.0, 39.0), batch(40.2, 10.0), batch(40.5, 10.0), batch(40.1, 10.0))
    assert plausible_first["flags"] == ["timer_tampered"]
    assert bound(batch(40.0, 39.0), batch(40.2, 39.5), batch(40.5, 10.0), batch(40.1, 39.0))["flags"] == []
    single = bound(batch(2.0, 1.0, counted=False), batch(40.0, 1.0))  # one counted batch, stalled: floored, forgiven
    assert single["flags"] == [] and single["flag_details"]["timing_bound"]["over_bound"] == 1
    assert bound(batch(40.0, 1.0), batch(41.0, 1.0))["flags"] == ["timer_tampered"]
    assert bound(batch(2.0, 1.0, counted=False))["flags"] == ["check_failed"]
    assert bound()["flags"] == ["check_failed"]


def test_on_a_cpu_the_sandboxs_cpu_account_bounds_a_round_trip_the_host_stretched():
    """A loaded host stretches the judge's round trip (an honest GELU beside three busy loops was timer_tampered in
    1 of 4 gradings), not the CPU time the sandbox's cgroup used in it: on a CPU the lower of the two is the trusted
    time. Honest claims are then not called forged however long the round trips, and a forged claim still is: the
    work it hides is in the CPU account too."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    cpu, ctx = torch.device("cpu"), {"overhead_ms": 3.0, "overhead_cpu_ms": 3.0}

    def verdict(wall_per_call, cpu_per_call, claim, k=4):
        res = {"flags": [], "flag_details": {}}
        bounds = [timed_loop._batch_bound((wall_per_call + 3.0) * k, k, claim, True, ctx, CHECKS, cpu, False,
                                          cpu_ms=(cpu_per_call + 3.0) * k) for _ in range(3)]
        timed_loop._bound_claims(res, bounds, ctx, CHECKS)
        return res["flags"], res["flag_details"]["timing_bound"]

    flags, detail = verdict(40.0, 20.5, 20.0)  # every round trip stretched by 20 ms a call
    assert flags == [] and detail["trusted_ms"] == pytest.approx(20.5) and detail["trusted_cpu_ms"] == pytest.approx(20.5)
    assert verdict(40.0, 40.0, 15.0)[0] == ["timer_tampered"]  # the CPU did the 40 ms: claiming 15 is forged
    assert verdict(20.5, 60.0, 20.0)[0] == []  # threads: more CPU than wall time, the round trip stands


def test_a_lone_batch_under_the_bound_is_timed_at_the_judges_figure():
    """One counted batch over the bound is forgiven (a host's stall can put it there), but its claim is not believed:
    the batch is timed at the judge's own figure for it. Timed at the bound's floor, (trusted - 10 ms) / 1.5 on a
    CPU, a fifth of every claim passed as 2x faster (adversarial/forged_claims_every_batch_layernorm with one batch;
    here the same forgery on a 2 ms call, a sixth of the LayerNorm's grading time)."""
    from tests.corpus import CORPUS

    # cut to a tenth: a claim is wall time, which a host loaded twice over stretched past five times the forward
    # thread's CPU clock (a fifth was then not under the floor)
    code = (CORPUS / "adversarial" / "claims_cut_to_a_fifth_matmul.py").read_text().replace('float(c["ms"]) / 5',
                                                                                           'float(c["ms"]) / 10')
    assert 'float(c["ms"]) / 10' in code
    problem = ProblemSet(SMALL_PROBLEMS).load("v3/level2/40_Matmul_Scaling_ResidualAdd")
    rec = grade(problem, code, options=Options(device="cpu", trials=3, warmup=1, timeout_s=300, gpu=None))[0]
    bound = json.loads(rec.flag_details)["timing_bound"]
    assert rec.status == "ok" and bound["batches"] == 1 and bound["floored"] == 1, (rec.status, rec.flags, bound)
    # floored: its claim stood under the bound; timed at the judge's figure, not the claim (how far apart the two are
    # is wall time against a CPU clock, which a loaded host brought to 1.6x: no test of it)
    assert rec.sol_ms == pytest.approx(bound["trusted_ms"]) and rec.sol_ms != pytest.approx(bound["claimed_ms"]), (rec.sol_ms, bound)


def test_the_roofline_reads_the_claims_before_any_batch_was_floored():
    """The judge times a batch at its own figure when the claim is under the bound; on a loaded host that figure can be
    slower than the work, and a 1/1000 forgery then looked like a slow honest kernel (ok at 0.25x). A claim under the
    roofline is a forgery whatever the floor made of it, a claim of 0.0 included."""
    from kb_data.harness.grade import _speed_checks

    from kb_data.rules import CHECKS

    rec = _grade(HONEST_GELU)
    assert rec.status == "ok" and "exceeds_roofline" not in rec.flags
    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    # claims against the floor itself (the honest call's time is no yardstick: a loaded CI host ran it at 6.1 ms, 10x
    # this machine's, and its 1/1000 stood over the floor)
    share = json.loads(rec.flag_details)["roofline_ms"] * CHECKS["roofline_slack_cpu"]
    for claimed, caught in ((rec.sol_ms, False), (share * 1.01, False), (share * 0.99, True), (0.0, True)):
        again = replace(rec, flags=[], status="ok")
        _speed_checks(again, problem, {"claimed_ms": claimed})
        assert ("exceeds_roofline" in again.flags) == caught and (again.status == "rejected") == caught, (claimed, again)


def test_the_cpu_roofline_holds_an_fp32_problem_to_the_float32_gemm_rate():
    """A CPU with a bfloat16 matrix unit (AMX: 6.8x its float32 rate on this workplace's machine) must not lower an
    fp32 problem's floor: a red-team claim stayed over a quarter of the bfloat16 floor while under a twentieth of the
    float32 one. A bf16 problem's floor takes the faster rate."""
    from kb_data.harness.grade import _meta_counts, _speed_checks
    from kb_data.harness.timing import cpu_peaks

    problem = ProblemSet(SMALL_PROBLEMS).load("v3/level1/1_Square_matrix_multiplication_")
    flops, nbytes = _meta_counts(problem.problem_id, problem.sha256, problem.code)
    peaks = cpu_peaks()
    assert peaks["gemm_gflops"] >= peaks["gemm_gflops_fp32"] > 0 and flops > 0
    for precision, rate in (("fp32", peaks["gemm_gflops_fp32"]), ("bf16", peaks["gemm_gflops"])):
        rec = RunRecord(problem_id=problem.problem_id, suite="v3", status="ok", sol_ms=1e3, ref_ms=1e3,
                        timing_method="perf_counter", precision_used=precision, flags=[])
        _speed_checks(rec, problem, {})
        floor = json.loads(rec.flag_details)["roofline_ms"]
        assert floor == pytest.approx(max(flops / (rate * 1e6), nbytes / (peaks["copy_gbs"] * 1e6)))


def test_a_gpu_batch_held_behind_the_gate_is_held_to_a_tight_bound():
    """A GPU batch that was all queued when the judge opened its gate took the GPU's time alone on the judge's clock:
    it stood at most 1.27x over honest claims on the H200 (over 1.17x only for calls under 0.05 ms; BENCHMARKS.md),
    so it is held to x1.1 plus 0.02 ms a call and 0.1 ms a batch.
    A claim of 0.75 of the truth on a 0.34 ms GEMM (adversarial/forged_claims_modest_matmul) is then caught, which
    the ungated bound (x1.5 plus 1 ms a call) let through; a batch that was not all queued (a forward that waits for
    the GPU) also has the harness's per-call host time taken off, and an honest one passes."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    gpu, gated = torch.device("cuda"), {"overhead_ms": 0.15, "overhead_host_ms": 0.5}
    held, late, ungated = (gated, True), (gated, False), ({"overhead_ms": 0.15}, False)  # (calibration, held)
    ctx = gated

    def verdict(case, wall_per_call, claim, k=16, n=16):
        calibration, was_held = case
        res = {"flags": [], "flag_details": {}}
        bounds = [timed_loop._batch_bound((wall_per_call + ctx["overhead_ms"]) * k, k, claim, True, calibration, CHECKS,
                                          gpu, was_held) for _ in range(n)]
        timed_loop._bound_claims(res, bounds, calibration, CHECKS)
        return res["flags"], res["flag_details"]["timing_bound"]

    assert verdict(held, 0.36, 0.36 * 1.05) == ([], verdict(held, 0.36, 0.36 * 1.05)[1])
    flags, detail = verdict(held, 0.36, 0.36 * 0.75)
    assert flags == ["timer_tampered"] and detail["held"] == 16 and detail["slack"] == CHECKS["timing_bound_slack_gated"]
    assert verdict(ungated, 0.36, 0.36 * 0.75)[0] == []  # the old bound's slack
    assert verdict(held, 0.5, 0.5 / 1.2, k=1)[0] == []  # one call a batch: the batch's margin is the call's
    assert verdict(held, 0.5, 0.5 / 1.5, k=1)[0] == ["timer_tampered"]
    # not held: the harness's host work between calls is on the clock, beside a 0.39 ms call (graphics/particles,
    # whose forward waits for the GPU), as much as the calibration opened first measured; held, it would be forged
    host_paced = 0.39 + ctx["overhead_host_ms"] - ctx["overhead_ms"]
    assert verdict(late, host_paced, 0.39)[0] == [] and verdict(held, host_paced, 0.39)[0] == ["timer_tampered"]
    assert verdict(late, host_paced, 0.39 * 0.6)[0] == ["timer_tampered"]


def test_a_job_may_cap_the_timed_calls_per_round_trip():
    """The noise benchmark's --max-batch: the judge sends at most that many timed calls per round trip."""
    capped = _grade(HONEST_GELU, extra={"max_batch": 1})
    default = _grade(HONEST_GELU)
    for rec in (capped, default):
        assert rec.status == "ok", (rec.error, rec.flag_details)
    rounds = lambda rec: json.loads(rec.flag_details)["timing_bound"]["calls_per_round_trip"]
    assert rounds(capped) == 1 and rounds(default) > 1
    # the flush watch reads delivered outputs only in batches of several calls; the record says in how many it did
    watched = json.loads(default.flag_details)["outputs_watched"]
    assert watched["batches"] >= 1 and 0 <= watched["read"] <= watched["batches"]
    assert "outputs_watched" not in json.loads(capped.flag_details)


def test_on_a_cpu_the_forward_threads_clock_floors_a_short_call_the_round_trip_cannot_see():
    """A CPU call of a third of a millisecond is far inside the round trip's 10 ms margin; the CPU clock of the thread
    the forwards ran on (the harness's copies run on another) is not: a call's wall time is never under its thread's
    CPU time, so claims cut to a fifth are under its floor whatever the host's load, and honest claims are not."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    cpu = torch.device("cpu")
    ctx = {"overhead_ms": 3.0, "overhead_cpu_ms": 3.0, "overhead_threads": {"forward": (0.0, 0.4), "aside": (0.0, 2.0)}}
    clocks = lambda forward, k: {"forward": forward, "aside": 2.0 * k}  # noqa: E731 (the aside thread at its no-work cost)

    def verdict(claim, forward_per_call, wall_per_call=None, k=8):
        res = {"flags": [], "flag_details": {}}
        wall = (wall_per_call if wall_per_call is not None else forward_per_call) + 3.0
        bounds = [timed_loop._batch_bound(wall * k, k, claim, True, ctx, CHECKS, cpu, False,
                                          cpu_ms=(forward_per_call + 3.0) * k, thread_ms=clocks((forward_per_call + 0.4) * k, k))
                  for _ in range(3)]
        timed_loop._bound_claims(res, bounds, ctx, CHECKS)
        return res["flags"], res["flag_details"]["timing_bound"], bounds

    flags, detail, _ = verdict(0.31, 0.30)
    assert flags == [] and detail["trusted_forward_ms"] == pytest.approx(0.30) and detail["over_bound"] == 0
    assert verdict(0.31, 0.30, wall_per_call=40.0)[0] == []  # a loaded host stretches the walls, not the clock
    flags, detail, bounds = verdict(0.06, 0.30)  # claims cut to a fifth
    assert flags == ["timer_tampered"] and detail["over_bound"] == 3
    assert all(b["trusted_ms"] == pytest.approx(0.30) for b in bounds)  # what a floored batch is timed at
    # a batch's own share of the no-work cost (its handshake and reply) comes off once, not once a call: an honest
    # batch of two calls with 1 ms of it is not floored
    two = timed_loop._batch_bound(3.3 * 2, 2, 0.30, True, {**ctx, "overhead_threads": {**ctx["overhead_threads"],
                                  "forward": (1.0, 0.55)}}, CHECKS, cpu, False, cpu_ms=3.3 * 2,
                                  thread_ms=clocks(1.0 + (0.55 + 0.30) * 2, 2))
    assert two["trusted_forward_ms"] == pytest.approx(0.30) and two["floor_ms"] < 0.30
    # the same cut without the forward thread's clock: inside the round trip's margin, believed
    res = {"flags": [], "flag_details": {}}
    timed_loop._bound_claims(res, [timed_loop._batch_bound(3.3 * 8, 8, 0.06, True, ctx, CHECKS, cpu, False,
                                                           cpu_ms=3.3 * 8) for _ in range(3)], ctx, CHECKS)
    assert res["flags"] == []


def test_on_a_cpu_work_moved_onto_the_harness_copies_thread_counts_as_the_calls():
    """The aside thread runs the harness's copies while the forward thread waits: work a submission moves there (a
    harness function it replaced, which a call's preparation runs) is out of the timed interval and off the forward
    thread's clock. Past the copies' no-work cost and their noise, it counts as the call's own; within them, nothing
    of an honest batch moves."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    cpu, k = torch.device("cpu"), 5
    ctx = {"overhead_ms": 3.0, "overhead_cpu_ms": 3.0, "overhead_threads": {"forward": (0.4, 0.5), "aside": (0.1, 0.2)}}
    allowed = (0.1 / k + 0.2) * CHECKS["timing_bound_slack_aside"]

    def verdict(claim, forward_work, aside_per_call, claims=None):
        res = {"flags": [], "flag_details": {}}
        thread_ms = {"forward": 0.4 + (0.5 + forward_work) * k, "aside": aside_per_call * k}
        typical = None if claims is None else timed_loop._typical_claim(claims, cpu)
        bounds = [timed_loop._batch_bound(6.0 * k, k, claim, True, ctx, CHECKS, cpu, False, cpu_ms=4.0 * k,
                                          thread_ms=thread_ms, typical_ms=typical) for _ in range(3)]
        timed_loop._bound_claims(res, bounds, ctx, CHECKS)
        return res["flags"], bounds[0]

    flags, bound = verdict(0.30, 0.30, allowed - 0.01)  # honest: the copies' noise within the allowance
    assert flags == [] and bound["trusted_forward_ms"] == pytest.approx(0.30) and bound["aside_over_allowed_ms"] < 0
    assert bound["floor_ms"] == pytest.approx((0.30 - CHECKS["timing_bound_margin_ms_forward"])
                                              / CHECKS["timing_bound_slack_forward"])
    flags, bound = verdict(0.10, 0.02, allowed + 0.6)  # 0.6 ms a call of the work done aside, 0.1 ms claimed
    assert flags == ["timer_tampered"] and bound["aside_over_allowed_ms"] == pytest.approx(0.6)
    assert bound["floor_ms"] == pytest.approx(0.6) and bound["trusted_ms"] >= 0.62  # what a floored batch is timed at
    assert verdict(0.62, 0.02, allowed + 0.6)[0] == []  # the same work claimed in full
    # a loaded host preempted one short call for 3 ms: its mean claim is over the floor, its median is not (CI,
    # session 44: 0.59 ms a call claimed of a lookup); an honest batch's preempted call moves neither under it
    preempted = lambda claim: [claim] * (k - 1) + [claim + 3.0]  # noqa: E731 (one call of the batch preempted 3 ms)
    assert verdict(0.10 + 3.0 / k, 0.02, allowed + 0.6, preempted(0.10))[0] == ["timer_tampered"]
    assert verdict(0.30 + 3.0 / k, 0.30, allowed - 0.01, preempted(0.30))[0] == []



def test_on_a_cpu_a_thread_of_the_submissions_own_past_the_sandboxs_share_is_timed_on_the_share():
    """The rest of the sandbox's CPU account (all but the two timing threads) stays at its no-work figure in an honest
    grading on its share of the cores; a helper thread that works while the forward thread flushes shows there. Past
    what the share's other cores could do over the round trip, the batch is timed at what that work takes on the
    share (as a batch over its share of the cores is), not called forged: an honest kernel on more threads is there
    too."""
    from kb_data.harness import timed as timed_loop
    from kb_data.harness.session import cpu_threads
    from kb_data.rules import CHECKS

    cpu, k, wall = torch.device("cpu"), 5, 1.2
    ctx = {"overhead_ms": 0.5, "overhead_cpu_ms": 0.5,
           "overhead_threads": {"forward": (0.4, 0.5), "aside": (0.1, 0.2), "rest": (0.0, 0.0)}}

    def bound(claim, forward_work, rest_per_call):
        thread_ms = {"forward": 0.4 + (0.5 + forward_work) * k, "aside": 0.1 + 0.2 * k}
        cpu_ms = sum(thread_ms.values()) + rest_per_call * k
        return timed_loop._batch_bound(wall * k, k, claim, True, ctx, CHECKS, cpu, False, cpu_ms=cpu_ms,
                                       thread_ms=thread_ms)

    honest = bound(0.30, 0.30, 0.0)
    assert honest["rest_over_allowed_ms"] == pytest.approx(-CHECKS["timing_bound_margin_ms_rest"])
    assert "share_ms" not in honest and honest["claimed_ms"] > honest["floor_ms"]
    helper = bound(0.05, 0.02, 0.30 + (cpu_threads() - 1) * wall)  # 0.3 ms a call past what the share's cores hold
    assert helper["share_ms"] == pytest.approx(0.05 + 0.30 - CHECKS["timing_bound_margin_ms_rest"])  # claim + helper
    within = bound(0.30, 0.30, (cpu_threads() - 1) * wall)  # a pool's workers busy on the share's other cores
    assert "share_ms" not in within


def test_a_round_trip_clocks_the_sandbox_from_before_its_inputs_are_written_until_its_outputs_are_copied():
    """Whatever a thread of the submission does with a batch's inputs once they are written, or with its outputs
    after the reply, must be inside the sandbox's CPU clocks and the kernel's samples: a GEMM written into the judge's
    output slots after the reply, while the judge read its clocks, stopped its sampler and only then copied the
    outputs (red team, session 34, tests/corpus/open/rt34_*), was ok at 5 trials. A round trip is driven here with a
    candidate that records the order of what the judge does."""
    from types import SimpleNamespace

    from kb_data.harness.round_trip import round_trip

    order = []

    def note(event, value=None):
        return lambda *args, **kw: order.append(event) or value

    def request(msg, stage, ready=None):
        order.append("sent")
        ready(True)
        order.append("gate opened")
        return {"ok": True, "calls": [{}]}

    watch = SimpleNamespace(start=note("flush watch started"))
    sampler = SimpleNamespace(start=note("sampler started"))
    cand = SimpleNamespace(res={}, flush_watch=True, sampler_error=None, sb=SimpleNamespace(pids=lambda: [1]),
                           next_gate=note("gate drawn", 7), flush_watcher=lambda value, outputs: watch,
                           sampling=lambda: sampler,
                           settled_clocks=lambda: order.append("clocks read paused") or (1.0, {}),
                           request=request, add_samples=note("sampler stopped"),
                           end_flush_watch=note("flush watch stopped"))
    round_trip(cand, {"calls": [{"outputs": []}]}, "timing", fill=note("inputs written"),
               received=note("outputs copied"))
    assert order.index("sampler started") < order.index("inputs written")
    assert order.index("flush watch started") < order.index("inputs written")
    # paused at both ends: a thread on its CPU has run more than its clocks yet show
    assert order.count("clocks read paused") == 2 and order.index("sampler started") < order.index("clocks read paused")
    assert order.index("clocks read paused") < order.index("inputs written") < order.index("gate opened")
    # the closing read comes with the sandbox paused: a thread still on a CPU shows up to a tick less (session 35)
    last = len(order) - 1 - order[::-1].index("clocks read paused")
    assert order.index("outputs copied") < last < order.index("sampler stopped")
    assert order.index("outputs copied") < order.index("flush watch stopped")


def test_one_slowed_reference_batch_counts_at_most_the_slack_over_the_quickest():
    """Kernel work that outlives the sandbox's freeze (timers armed to fire beside the judge, red team session 35)
    slowed the paired reference in one batch of two 3-9x: the median of two batch ratios took it (ok at 1.5-3x on a
    0.4 ms GELU). A batch's reference now counts at most the slack over the quickest batch and a margin; the spread of
    an honest run stays as it is, and the record says what was cut."""
    from kb_data.harness.timed import capped_reference_batches
    from kb_data.rules import CHECKS

    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    res = {"flag_details": {}}
    slack, margin = CHECKS["reference_batch_slack"], CHECKS["reference_batch_margin_ms_cpu"]
    assert capped_reference_batches([1.0, 9.0], res, CHECKS, cpu) == [1.0, slack * 1.0 + margin]
    assert res["flag_details"]["reference_batches_capped"] == {"batches": 1, "of": 2, "worst_over_quickest": 9.0}
    honest = {"flag_details": {}}
    assert capped_reference_batches([1.0, 1.3, 1.1], honest, CHECKS, cpu) == [1.0, 1.3, 1.1]
    assert capped_reference_batches([5.0], honest, CHECKS, gpu) == [5.0] and honest["flag_details"] == {}
    on_gpu = capped_reference_batches([0.05, 0.5], {"flag_details": {}}, CHECKS, gpu)
    assert on_gpu == [0.05, slack * 0.05 + CHECKS["reference_slowdown_min_ms"]]


def test_a_storm_of_interrupts_beside_the_frozen_reference_is_recorded_as_the_hosts():
    """Timers armed by a sandbox fired while it was frozen, in interrupt context charged to the judge timing its
    reference (red team session 35: timerfds in six processes slowed every reference batch 3-10x). A CPU grading's
    sandbox can arm none now (hostile/timer_fanout_refused_on_a_cpu_gelu), and the count is host-wide: a neighbour's
    storm failed an honest grading beside it (session 39). Each CPU's interrupts in each reference batch are still held
    to that CPU's rate in the calibration (a large host's other CPUs do not add up to a storm), and a storm is recorded
    with no flag; a host that cannot say is recorded as not read."""
    from kb_data.harness.round_trip import host_interrupts
    from kb_data.harness.timed import _interrupt_check
    from kb_data.rules import CHECKS

    first = host_interrupts()
    assert first and all(isinstance(n, int) for n in first)  # the real counts, since boot, one per CPU
    assert all(b >= a for a, b in zip(first, host_interrupts()))

    def check(batches, base=(2000.0, 1500.0)):
        res = {"flags": [], "flag_details": {}}
        _interrupt_check(res, {"interrupts_per_s": list(base)}, batches, CHECKS)
        return res

    quiet = check([([1000, 500], [1005, 505], 0.005), ([2000, 900], [2050, 950], 0.05)])  # under the rates, frozen
    assert quiet["flags"] == [] and quiet["flag_details"]["reference_interrupts"]["calibration_per_s_busiest_cpu"] == 2000
    storm = check([([1000, 500], [1005, 505], 0.005), ([2000, 900], [2050, 900 + 33000 // 20], 0.05)])  # 33000/s, 50 ms
    assert storm["flags"] == [] and "the host's" in storm["flag_details"]["reference_interrupts"]["storm"]
    spread = check([([0] * 2, [180, 180], 0.02)], base=(0.0, 0.0))  # 9000 a second on each CPU: none past the bound
    assert "storm" not in spread["flag_details"]["reference_interrupts"]
    burst = check([([1000, 500], [1045, 505], 0.002)])  # a fast rate over too few to slow anything
    assert "storm" not in burst["flag_details"]["reference_interrupts"]
    unread = check([(None, [10, 10], 0.01)])
    assert unread["flags"] == [] and "not read" in unread["flag_details"]["reference_interrupts"]


def test_the_interrupts_counted_are_the_timers_a_frozen_sandbox_can_have_armed():
    """Timer rows count; the interrupts one CPU sends another for running code (wake-ups, cross-calls, TLB
    shootdowns) and devices do not: a frozen sandbox runs no code, while the judge's own thread pool and the test
    suite's disk writes raised either past the storm's bound on an honest ReLU (CI, session 35). A table with no timer
    row cannot be read for this."""
    from kb_data.harness.round_trip import interrupt_counts

    table = (b"           CPU0       CPU1       \n"
             b"  0:         41          0   IO-APIC   2-edge      timer\n"
             b" 24:        700         12   PCI-MSI 65536-edge      virtio0-config\n"
             b" 36:          0    1610464   PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
             b" 11:       5000       6000   GICv3  30 Level     arch_timer\n"
             b"NMI:          3          4   Non-maskable interrupts\n"
             b"LOC:     100000     200000   Local timer interrupts\n"
             b"RES:     555555     666666   Rescheduling interrupts\n"
             b"CAL:      77777      88888   Function call interrupts\n"
             b"TLB:       9999       8888   TLB shootdowns\n"
             b"HVS:         70         80   Hyper-V stimer0 interrupts\n"
             b"IPI0:       123        456   Rescheduling interrupts\n"
             b"ERR:          0\n")
    assert interrupt_counts(table) == [41 + 5000 + 100000 + 70, 6000 + 200000 + 80]
    assert interrupt_counts(b"") is None
    assert interrupt_counts(b"      CPU0\nRES:   5   Rescheduling interrupts\n") is None


def test_the_judge_polls_for_a_gpu_batchs_reply_and_reads_nothing_of_it(monkeypatch):
    """On a GPU the judge waits for a timed batch's reply by polling the socket (a sleeper's wake-up grew from 0.05 to
    0.28 ms with the length of the batch on a KVM guest, and honest max pooling was timer_tampered): the poll returns
    once the reply is there and leaves it to be read whole, and gives up after AWAKE_WAIT_S or at the job's deadline,
    when recv() takes over."""
    import socket
    from types import SimpleNamespace

    from kb_data.harness import channel, session
    from kb_data.harness.session import Candidate

    judge, cand = socket.socketpair()
    with judge, cand:
        now = session.timing._perf_counter
        assert not channel.poll_readable(judge, now() + 0.01)  # nothing comes: it gives up
        channel.send(cand, {"calls": []})
        assert channel.poll_readable(judge, now() + 60) and channel.poll_readable(judge, 0.0)  # there: at once
        assert channel.recv(judge, timeout_s=1) == {"calls": []}
        waiting = SimpleNamespace(sb=SimpleNamespace(sock=judge), deadline=now() + 60)
        monkeypatch.setattr(channel, "AWAKE_WAIT_S", 0.01)
        Candidate._poll_until_readable(waiting)  # nothing comes: it returns, and there is still nothing to read
        judge.setblocking(False)
        with pytest.raises(BlockingIOError):
            judge.recv(1)
        monkeypatch.setattr(channel, "AWAKE_WAIT_S", 60.0)
        Candidate._poll_until_readable(SimpleNamespace(sb=waiting.sb, deadline=0.0))  # the deadline has passed


def test_a_gpu_batchs_round_trip_is_split_by_the_candidates_own_events_as_evidence_only():
    """Where a GPU batch's round trip went beyond the claims (the thirty-seventh session's open 0.04-0.09 ms): outside
    the GPU's span of the batch, the harness's copies, the rest of the span. The figures are the candidate's and only
    recorded: a malformed account is dropped, never believed."""
    from kb_data.harness.round_trip import gpu_phases, median_phases

    calls = [{"ms": 0.5, "flush_ms": 0.08}, {"ms": 0.5, "flush_ms": 0.08}]
    reply = {"calls": calls, "phases": {"span": 2.0, "prepare": [0.3, 0.3], "deliver": [0.1, 0.1]}}
    got = gpu_phases(reply, calls, 2.5)
    assert got == pytest.approx({"outside": 0.25, "copies": 0.4, "rest": 0.02})
    for bad in ("x", {"span": 2.0, "prepare": [0.3, float("nan")], "deliver": [0.1, 0.1]},
                {"span": -1.0, "prepare": [0.3, 0.3], "deliver": [0.1, 0.1]},
                {"span": 2.0, "prepare": [0.3] * 3, "deliver": [0.1, 0.1]}, {"prepare": [0.3, 0.3]}):
        assert gpu_phases({**reply, "phases": bad}, calls, 2.5) is None, bad
    assert gpu_phases({"calls": calls}, calls, 2.5) is None  # a CPU batch has no such account
    later = gpu_phases(reply, calls, 3.5)
    assert median_phases([got, later, later])["outside"] == pytest.approx(0.75) and median_phases([]) is None


def test_a_gpu_timed_batch_reports_its_copies_and_span_on_the_streams_events(monkeypatch):
    """Timer.timed_batch's GPU path, on events stood in for CUDA's (each records the tick of a clock that prepare(),
    the call and after() advance as their GPU work would): the claims and flushes as before, and `phases`, where the
    batch's GPU time went (the evidence gpu_phases reads)."""
    from kb_data.harness import timing

    clock = [0.0]

    class Event:
        def __init__(self, enable_timing=True):
            self.t = None

    def advance(ms):
        clock[0] += ms

    monkeypatch.setattr(timing, "_Event", Event)
    monkeypatch.setattr(timing, "_event_record", lambda e: setattr(e, "t", clock[0]))
    monkeypatch.setattr(timing, "_event_elapsed", lambda a, b: b.t - a.t)
    monkeypatch.setattr(timing, "_cuda_sync", lambda device: None)
    timer = timing.Timer(torch.device("cuda"), l2_flush=False)
    calls = [(lambda: advance(0.3), lambda: advance(0.5), lambda out: advance(0.1)),
             (lambda: advance(0.2), lambda: advance(0.7), lambda out: advance(0.1))]
    got = timer.timed_batch(calls)
    assert got == [pytest.approx((0.5, 0.0)), pytest.approx((0.7, 0.0))]
    assert timer.phases == {"span": pytest.approx(1.9), "prepare": [pytest.approx(0.3), pytest.approx(0.2)],
                            "deliver": [pytest.approx(0.1), pytest.approx(0.1)]}
