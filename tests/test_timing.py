"""Timing on real parts: paired ABBA trials, the GPU-alone median and the head start, the flush and late-write checks."""
from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
import torch

from kb_data.problems import ProblemSet
from tests.corpus import SMALL_PROBLEMS
from kb_data.schema import RunRecord
from kb_data.harness import timing
from kb_data.harness.grade import Options, grade
from tests.harness_support import GELU, HONEST_GELU, _gpu_cache_released  # noqa: F401 (_gpu_cache_released: an autouse fixture)


def test_timer_surface_detects_replacement(monkeypatch):
    snap = timing.snapshot_surface()
    assert timing.timer_surface_changes(snap) == []
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    assert timing.timer_surface_changes(snap) == ["time.perf_counter"]


def test_timer_quantiles_and_cpu_timing():
    t = timing.Timing([5.0, 1.0, 3.0, 2.0, 4.0], "cpu")
    assert t.median_ms == 3.0 and t.p10_ms == pytest.approx(1.4) and t.p90_ms == pytest.approx(4.6)
    calls = []
    out = timing.Timer("cpu", l2_flush=False).run(lambda i: calls.append(i) or time.sleep(0.01), warmup=2, trials=4)
    assert calls == list(range(6)) and len(out.times_ms) == 4 and all(9 <= x < 200 for x in out.times_ms)


def test_paired_timing_alternates_abba_and_checks_whose_output_it_is():
    """run_paired: both calls get the same number of trials, in ABBA order; each check sees only its own
    call's outputs."""
    from kb_data.harness.timing import Timer

    order, seen = [], {"s": [], "o": []}

    def subject(i):
        order.append("s")
        return ("s", i)

    def other(i):
        order.append("o")
        return ("o", i)

    t_s, t_o = Timer("cpu", l2_flush=False).run_paired(
        subject, other, warmup=0, trials=6, check=lambda i, out: seen["s"].append(out),
        check_other=lambda i, out: seen["o"].append(out))
    assert "".join(order) == "soossoossoos"
    assert len(t_s.times_ms) == len(t_o.times_ms) == 6
    assert seen == {"s": [("s", i) for i in range(6)], "o": [("o", i) for i in range(6)]}


def test_paired_ratio_pairs_the_trials_of_one_iteration():
    """The median of per-iteration ratios, not the ratio of the medians: a clock change during the loop
    moves both calls of an iteration alike and cancels."""
    from kb_data.harness.timing import Timing, paired_ratio

    subject = Timing([1.0, 1.0, 2.0, 2.0, 2.0], "cuda")  # the clock drops after two iterations
    other = Timing([1.1, 1.1, 2.0, 2.0, 2.2], "cuda")     # the other side's noise: one ratio of 1.0, one 1.1 more
    assert paired_ratio(subject, other) == pytest.approx(1.1)
    assert other.median_ms / subject.median_ms == pytest.approx(1.0)  # the medians miss it
    assert paired_ratio(Timing([1.0, 2.0, 3.0, 4.0], "cuda"), Timing([4.4, 3.3, 2.2, 1.1], "cuda")) == \
        pytest.approx((1.65 + 2.2 / 3) / 2)
    # a call under the event timer's resolution reads 0 ms: that pair says nothing, and no pair at all, no ratio
    assert paired_ratio(Timing([0.0, 1.0, 1.0], "cuda"), Timing([0.5, 1.2, 1.2], "cuda")) == pytest.approx(1.2)
    assert paired_ratio(Timing([0.0], "cuda"), Timing([0.5], "cuda")) is None


def test_speedup_is_the_paired_ratio_only_for_a_paired_baseline():
    from kb_data.harness.grade import _apply_fail_flags

    rec = RunRecord(record_id="x", suite="v3", status="ok", correct=True, ref_ms=2.0, sol_ms=1.0, flags=[],
                    baseline_source="paired")
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.speedup == 2.1
    rec = replace(rec, baseline_source="measured")
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.speedup == 2.0
    rec = replace(rec, baseline_source="paired", flags=["timer_tampered"])
    _apply_fail_flags(rec, {"paired_speedup": 2.1})
    assert rec.status == "rejected" and rec.speedup is None


def test_late_write_check_compares_the_outputs_bitwise(monkeypatch):
    """The outputs copied right after a timed call's end event against the same outputs after the device sync
    (timing._snapshot, timing._same): equal bits pass, NaN included; any changed element, shape or dtype does not;
    outputs too large to copy are not checked there (the side-stream check in the dynamic checks still runs)."""
    y = torch.randn(64, 33)[:, :32]  # not contiguous
    y[0, 0] = float("nan")
    snap = timing._snapshot(y)
    assert timing._same(snap, y) and timing._same(timing._snapshot((y, 3, y.sum())), (y, 3, y.sum()))
    z = y.clone()
    z[5, 7] += 1e-6
    assert not timing._same(snap, z)
    assert not timing._same(snap, y.double()) and not timing._same(snap, y.reshape(-1)) and not timing._same(snap, (y, y))
    assert timing._snapshot(3.0) is None
    monkeypatch.setattr(timing, "SNAPSHOT_MAX_BYTES", y.numel() * 4 - 1)
    assert timing._snapshot(y) is None and timing._snapshot(y[:8]) is not None

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.uint8, torch.float64])
@pytest.mark.parametrize("n", [1, 3, 8, 13, 4096 + 5])
def test_bitwise_equal_sees_every_byte_whatever_the_word_it_compares(dtype, n):
    """bitwise_equal compares as wide words as the tensors align to: a change to any one byte is seen, at any length
    and storage offset (views that start mid-word included); the same bits are equal, a NaN too; -0.0 is not 0.0."""
    base = (torch.rand(n + 3) * 100).to(dtype)
    for start in (0, 1, 3):
        a = base[start:start + n]
        b = a.clone()
        assert timing.bitwise_equal(a, b)
        for i in {0, n // 2, n - 1}:
            for bit in (0, 7):
                c = a.clone()
                c.view(torch.uint8).view(-1)[i * a.element_size() + (bit % a.element_size())] ^= 1 << bit
                assert not timing.bitwise_equal(a, c) and not timing.bitwise_equal(c, a)
    if dtype.is_floating_point:
        nan = torch.full((n,), float("nan"), dtype=dtype)
        assert timing.bitwise_equal(nan, nan.clone())
        assert not timing.bitwise_equal(torch.zeros(n, dtype=dtype), -torch.zeros(n, dtype=dtype))
    assert not timing.bitwise_equal(base[:n], base[:n].reshape(1, n)) 
    other = torch.float64 if dtype != torch.float64 else torch.float32
    assert not timing.bitwise_equal(base, base.to(other))



def test_a_slower_flush_ahead_of_the_candidates_calls_is_side_stream_work():
    """The flush's GPU time ahead of the candidate's timed calls against the same flush in its calibration calls,
    before the submission loaded (timed_loop._flush_check), with the H200's figures: work on a stream that does not wait
    for the caller's shares the GPU with the flush (82.9 against 68.6 us). Where the reference's flush (timed in the
    judge's process after work of the same size) is longer than the calibration's, it is the yardstick, up to the
    bound over the calibration: the honest Triton GELU on a joined side stream, audited on the H200 (2026-12-03),
    flushed in 71.3 us against a calibration of 61.6 us and the reference's 68.4 us. Without a calibration figure
    there is nothing to judge."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    def timed(flush_ms):
        return timing.Timing([0.01] * len(flush_ms), "cuda", flush_ms=flush_ms)

    for cand, calib, flagged in ((0.0829, 0.0686, True), (0.0783, 0.0788, False), (0.0690, 0.0686, False),
                                 (0.0740, 0.0686, False), (0.0770, 0.0686, False)):  # +12%: under the 15% bound
        res = {"flags": [], "flag_details": {}}
        timed_loop._flush_check(timed([cand] * 3), calib, timed([0.05] * 3), res, CHECKS)
        assert ("side_stream_work" in res["flags"]) == flagged, (cand, calib)
        assert res["flag_details"]["flush_ms"] == {"candidate": cand, "calibration": calib, "reference": 0.05}
    for cand, calib, ref, flagged in ((0.0713, 0.0616, 0.0684, False), (0.0829, 0.0686, 0.0686, True),
                                      (0.0841, 0.0686, 0.0900, False), (0.0915, 0.0686, 0.0900, True)):
        res = {"flags": [], "flag_details": {}}  # the last two: a slowed reference raises the yardstick by 15% at most
        timed_loop._flush_check(timed([cand] * 3), calib, timed([ref] * 3), res, CHECKS)
        assert ("side_stream_work" in res["flags"]) == flagged, (cand, calib, ref)
    res = {"flags": [], "flag_details": {}}  # a torch.compile baseline: the candidate timed alone, the figures kept
    timed_loop._flush_check(timed([0.0841] * 3), 0.0686, None, res, CHECKS)
    assert res["flags"] == ["side_stream_work"] and res["flag_details"]["flush_ms"] == {"candidate": 0.0841,
                                                                                          "calibration": 0.0686}
    res = {"flags": [], "flag_details": {}}
    timed_loop._flush_check(timed([0.0841] * 3), None, None, res, CHECKS)
    assert res == {"flags": [], "flag_details": {"flush_ms": {"candidate": 0.0841, "calibration": None}}}
    res = {"flags": [], "flag_details": {}}  # the CPU: no flush timed on a device
    timed_loop._flush_check(timing.Timing([1.0], "cpu"), None, timing.Timing([1.0], "cpu"), res, CHECKS)
    assert res == {"flags": [], "flag_details": {}}


def test_a_flush_far_shorter_than_calibrated_or_missing_is_timer_tampered():
    """A candidate that drops its own timer's L2 flush (red team, 2026-12-02: its calls then found their inputs in
    cache) reports a flush far under its calibration's, or none: `timer_tampered`. Honest flushes on the H200 stood
    at 0.78-1.2x their calibration (BENCHMARKS.md)."""
    from kb_data.harness import timed as timed_loop
    from kb_data.rules import CHECKS

    def flagged(flush_ms, calib):
        res = {"flags": [], "flag_details": {}}
        timed_loop._flush_check(timing.Timing([0.01] * max(1, len(flush_ms)), "cuda", flush_ms=flush_ms), calib, None, res,
                           CHECKS)
        return res["flags"]

    assert flagged([0.0031] * 3, 0.0686) == ["timer_tampered"]
    assert flagged([], 0.0686) == ["timer_tampered"]
    assert flagged([0.0606] * 3, 0.0780) == [] and flagged([0.0690] * 3, 0.0686) == []
    assert flagged([], None) == []


LATE_GELU = '''
import torch, torch.nn as nn
class Model(nn.Module):
    """Writes its output on a private stream that the caller's stream never waits for: forward returns (and the
    end event is recorded) while the write is still ~0.1 ms away."""
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()
    def forward(self, x):
        out = torch.zeros_like(x)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            torch.cuda._sleep(1_000_000)
            out.copy_(torch.nn.functional.gelu(x))
        return out
'''


FLUSH_GELU = '''
import torch, torch.nn as nn
class Model(nn.Module):
    """Copies 4 GiB on a private high-priority stream that does not wait for the caller's (so it runs beside the
    harness's L2 flush, queued ahead of the call, its blocks dispatched ahead of the flush's), then waits for the
    caller's stream and computes GELU there; the caller's stream waits for it: the output is right and complete at
    the end event. The copies stand for any work a submission would hide in the flush."""
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream(priority=-1)
        self.src = torch.empty(1 << 28, device="cuda")
        self.dst = torch.empty_like(self.src)
    def forward(self, x):
        main = torch.cuda.current_stream()
        with torch.cuda.stream(self.side):
            for _ in range(4):
                self.dst.copy_(self.src)
            self.side.wait_stream(main)
            y = torch.nn.functional.gelu(x)
        main.wait_stream(self.side)
        return y
'''


def _time_on_gpu(code: str, flush_bytes: int | None = None) -> dict:
    """`code` (torch ops: framework ops allowed) graded on the GPU against the GELU problem, its timing paired with
    the eager reference: status and flags."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    opt = Options(device="cuda:0", trials=20, warmup=2, measure_baseline=False, compile_baseline=False,
                  require_custom_kernel=False, extra={"l2_flush_bytes": flush_bytes} if flush_bytes else {})
    rec, _ = grade(ProblemSet().load(GELU), code, options=opt)
    print(f"status {rec.status} flags {rec.flags} details {rec.flag_details}", flush=True)
    return {"status": rec.status, "flags": rec.flags, "flag_details": json.loads(rec.flag_details or "{}")}


@pytest.mark.gpu
def test_a_late_output_write_in_the_timed_calls_is_side_stream_work():
    """Output written on a stream the caller's never waits for: the candidate copies its outputs into the judge's
    slots on the caller's stream as soon as forward returns, so the write lands after the copy and the outputs the
    judge compares are wrong (incorrect); where a copy happened to see it complete, the timed call's late write is
    side_stream_work. Either way no speedup is granted for work outside the timed interval."""
    res = _time_on_gpu(LATE_GELU)
    assert res["status"] == "incorrect" or "side_stream_work" in res["flags"], res
    honest = _time_on_gpu(HONEST_GELU)
    assert honest["status"] == "ok" and honest["flags"] == [], honest


@pytest.mark.gpu
def test_work_run_during_the_l2_flush_is_side_stream_work():
    """Copies launched on a private high-priority stream that does not wait for the caller's, outside every timed
    interval: where they run beside the L2 flush ahead of a timed call they slow it past the same flush in the
    candidate's calibration calls (side_stream_work); where they run between the batch's intervals the round trip
    holds them and the claims fall under the judge's clock (timer_tampered). On the H200 (2026-12-02, timed batches)
    it was the second, with half these copies (0.95 ms a call) once flagged and once 5 us under the bound's 1 ms
    margin: the copies are sized well over it. Either way the work outside the intervals earns nothing. The flush is
    2 GiB here (about 0.5 ms on the H200), so that the host launches the copies while it runs whatever its speed."""
    res = _time_on_gpu(FLUSH_GELU, flush_bytes=2 << 30)
    assert res["status"] == "rejected", res
    assert {"side_stream_work", "timer_tampered"} & set(res["flags"]), res
    honest = _time_on_gpu(HONEST_GELU, flush_bytes=2 << 30)
    assert honest["status"] == "ok" and honest["flags"] == [], honest


@pytest.mark.gpu
def test_the_gpu_alone_median_leaves_the_hosts_work_out_and_refuses_a_host_sync():
    """Timer.run_gpu_alone on three calls of one small kernel: with 2 ms of host work before the launch the graded
    median holds it and the GPU-alone one does not; 40 ms of host work outlasts the first head start (10 ms), which
    grows until it covers it; a forward that reads a value back to the host cannot be covered at all."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    x = torch.randn(1 << 20, device="cuda:0")

    def busy(ms):
        def call(_i):
            t0 = time.perf_counter()
            while (time.perf_counter() - t0) * 1e3 < ms:
                pass
            return x * 2
        return call

    timer = timing.Timer("cuda:0")
    graded = timer.run(busy(2.0), warmup=3, trials=30).median_ms
    alone = timer.run_gpu_alone(busy(2.0), trials=30)
    kernel = timer.run_gpu_alone(busy(0.0), trials=30)
    long = timer.run_gpu_alone(busy(40.0), trials=10)
    synced = timer.run_gpu_alone(lambda _i: (x * 2).sum().item(), trials=10)
    print(f"graded {graded:.4f} alone {alone.median_ms:.4f} kernel {kernel.median_ms:.4f}; 40 ms host: head start "
          f"{long.head_start_ms} median {long.median_ms}; sync: {synced.error}", flush=True)
    assert graded > 1.9 and alone.error is None and alone.median_ms < 0.2
    assert abs(alone.median_ms - kernel.median_ms) < 0.02 + 0.1 * kernel.median_ms
    assert long.error is None and long.head_start_ms >= 40 and long.median_ms < 0.2
    assert synced.median_ms is None and "waits for the GPU" in synced.error


@pytest.mark.gpu
def test_a_head_start_times_a_host_bound_batch_by_its_gpu_work():
    """Timer.timed_batch on eight calls of 2 ms host work and one small kernel each: queued as they come, each
    interval holds the host's 2 ms (the GPU waits for it); behind a spin as long as the batch took to queue (the
    judge's equivalent of the candidate's gate), each holds the kernel alone."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    x = torch.randn(1 << 20, device="cuda:0")

    def call():
        t0 = time.perf_counter()
        while (time.perf_counter() - t0) * 1e3 < 2.0:
            pass
        return x * 2

    timer = timing.Timer("cuda:0")
    batch = [(lambda: None, call, lambda out: None)] * 8
    paced = [ms for ms, _ in timer.timed_batch(batch)]
    queued = timer.queued_ms
    ahead = [ms for ms, _ in timer.timed_batch(batch, head_start_ms=queued)]
    print(f"queued {queued:.1f} ms; host-paced {sorted(paced)}; behind the spin {sorted(ahead)}", flush=True)
    assert queued >= 16 and sorted(paced)[4] > 1.5 and max(ahead) < 0.2


HOST_BOUND_GELU = """
import time
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 16384


class Model(nn.Module):
    def forward(self, x):
        time.sleep(0.001)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""


@pytest.mark.gpu
def test_the_identity_of_a_host_bound_reference_scores_one(tmp_path):
    """A reference whose host work (1 ms) outlasts its GPU work (a GELU of tens of microseconds), graded as its own
    submission: the candidate's batches wait behind the gate until queued, so they are timed by their GPU work; the
    paired reference's must be too (v0.1's FFT ConvTranspose2d scored 1.2-2.0x on an H100 when they were not)."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    (tmp_path / "v3" / "level1").mkdir(parents=True)
    (tmp_path / "v3" / "level1" / "26_GELU_.py").write_text(HOST_BOUND_GELU)
    problem = ProblemSet(tmp_path).load(GELU)
    opt = Options(device="cuda:0", trials=20, warmup=2, measure_baseline=False, compile_baseline=False,
                  require_custom_kernel=False)
    rec, _ = grade(problem, HOST_BOUND_GELU, options=opt)
    print(f"status {rec.status} speedup {rec.speedup} sol {rec.sol_ms} ref {rec.ref_ms} alone {rec.ref_alone_ms} "
          f"flags {rec.flags} {rec.flag_details}", flush=True)
    assert rec.status == "ok" and rec.flags == [], (rec.status, rec.flags, rec.error)
    assert 0.8 < rec.speedup < 1.25, rec.speedup


@pytest.mark.gpu
def test_calibration_times_the_fixed_work_within_the_gpus_limits():
    """timing.calibrate on the GPU: one median per figure, each no faster than the hardware allows (the copy moves
    2 GiB: at most ~4.8 TB/s on an H200, so over 0.4 ms; 64 dependent kernels take over 64 x 0.8 us)."""
    cal = timing.calibrate("cuda:0") if torch.cuda.is_available() else pytest.skip("needs a CUDA GPU")
    print(f"calibration {cal}", flush=True)
    assert set(cal) == set(timing.CALIBRATION_WORK)
    assert cal["copy_ms"] > 0.4 and cal["launch_ms"] > 0.05 and 0.2 < cal["gemm_ms"] < 50


def test_a_cpu_timed_call_reads_its_outputs_before_the_timer_stops(monkeypatch):
    """Memory that fills itself when first read (a fault handler: adversarial/segv_lazy_output_gelu) must do that work
    inside the timed interval, not in the untimed copy after it: the first read of the output comes between the two
    clock reads of its call, before the delivery."""
    events = []

    class FillsWhenRead(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if "read" not in events:
                events.append("read")
            return super().__torch_function__(func, types, args, kwargs or {})

    def clock():
        events.append("clock")
        return 0.0

    monkeypatch.setattr(timing, "_perf_counter", clock)
    timing.Timer(torch.device("cpu"), l2_flush=False).timed_batch(
        [(lambda: None, lambda: torch.zeros(1024).as_subclass(FillsWhenRead), lambda out: events.append("delivered"))])
    assert events == ["clock", "read", "clock", "delivered"], events


def test_a_cpu_batch_runs_its_copies_on_the_aside_thread_and_its_flushes_and_calls_here():
    """The candidate's CPU timed batch (harness/candidate.Aside): each call's input copy and output delivery run on the
    aside thread, its flush and forward on the calling thread, whose CPU clock the judge reads; the outputs' last
    reference goes aside with them (their pages are freed there); an exception aside is raised here."""
    import threading
    import weakref

    from kb_data.harness.candidate import Aside

    aside, here, seen = Aside(), threading.get_native_id(), []
    assert aside.native_id not in (None, here)
    timer = timing.Timer(torch.device("cpu"), flush_bytes=1 << 20)
    flush = timer.flush
    timer.flush = lambda call=0: (seen.append(("flush", threading.get_native_id())), flush(call))

    def call():
        seen.append(("call", threading.get_native_id()))
        out = torch.ones(4096)
        weakref.finalize(out, lambda: seen.append(("freed", threading.get_native_id())))
        return out

    timer.timed_batch([(lambda: seen.append(("prepare", threading.get_native_id())), call,
                        lambda out: seen.append(("after", threading.get_native_id())))] * 2, aside=aside.run)
    where = {"prepare": aside.native_id, "flush": here, "call": here, "after": aside.native_id, "freed": aside.native_id}
    assert seen == [(step, where[step]) for step in ("prepare", "flush", "call", "after", "freed") * 2], seen
    with pytest.raises(ZeroDivisionError):
        aside.run(lambda: 1 / 0)
    assert aside.run(lambda: 7) == 7


def test_a_timed_call_that_misses_a_compiled_paired_reference_is_judged_by_the_eager_one():
    """A compiled paired reference may stand up to the tolerance away from the eager one: a candidate as exact as the
    eager reference must not be `stale_output` for it, and one that is wrong must still be."""
    from kb_data.harness.timed import judged_call
    from kb_data.rules import rules_for

    rules = rules_for("v3")
    ref = torch.nn.Linear(64, 32).eval()
    x = torch.randn(8, 64)
    with torch.no_grad():
        truth = ref(x)
    atol = rtol = 1e-2
    off = atol + rtol * truth.abs().max().item()  # exactly the tolerance: the compiled side alone is off by it

    def compiled(inp):  # what a compiled reference returned for this call: within tolerance of the eager one, not 0
        return ref(inp) + 0.9 * off

    def call(outs):
        return {"ref_out": compiled(x).detach(), "outs": [outs], "why": None, "inputs": [x.clone()], "rng": 7}

    assert judged_call(call(truth - 0.9 * off), ref, compiled, rules, atol, rtol) == (True, None)  # 1.8 off the compiled
    ok, why = judged_call(call(truth + 3 * off), ref, compiled, rules, atol, rtol)
    assert not ok and "max" in why
    ok, _ = judged_call(call(truth - 0.9 * off), ref, ref, rules, atol, rtol)  # an eager pair: no second opinion
    assert not ok

    def out_of_memory(*_):
        raise torch.OutOfMemoryError("no room for a second opinion")

    ok, why = judged_call(call(truth - 0.9 * off), out_of_memory, compiled, rules, atol, rtol)
    assert not ok and why  # the eager reference could not run: the compiled reference's verdict stands


def test_modes_left_active_are_reported_and_the_default_device_mode_is_not():
    """A torch function or dispatch mode left active sees every torch call of its thread, the harness's own copies
    included; torch.set_default_device's mode is one an honest submission may leave on."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    assert timing.modes_active() == []
    with torch.device("cpu"):
        assert timing.modes_active() == []
    with TorchFunctionMode():
        assert timing.modes_active() and "function mode" in timing.modes_active()[0]
    with TorchDispatchMode():
        assert timing.modes_active() == ["a torch dispatch mode left active (1)"]
    assert timing.modes_active() == []


def test_the_harness_calls_torchs_own_methods_whatever_replaced_them(monkeypatch):
    """The flush, the timed read of the outputs and the copies in the candidate's process go through torch.Tensor's
    methods as captured before any submission loaded: a replaced `torch.Tensor.zero_` (a flush skipped) or a `detach`
    set on one output (a read dodged) is never called."""
    called = []
    zero_ = torch.Tensor.zero_
    monkeypatch.setattr(torch.Tensor, "zero_", lambda self: called.append("zero_") or self)
    timer = timing.Timer(torch.device("cpu"), flush_bytes=1 << 16)
    timer.flush_buf.fill_(1)
    timer.flush()
    assert int(timer.flush_buf.sum()) == 0
    monkeypatch.setattr(torch.Tensor, "zero_", zero_)
    out = torch.ones(4096)
    out.detach = lambda: called.append("detach") or torch.zeros(1)
    timing._touch(out)
    assert called == [] and timing.shadowed(out) == ["detach"] and timing.shadowed(torch.ones(2)) == []


def test_a_cpu_batch_over_its_cores_share_counts_its_work_on_that_share():
    """The candidate and the paired reference each get half the cores; a batch whose sandbox used more CPU than that
    share could give in the batch's round trip ran on the reference's half too, and is timed as its work takes on its
    own share (a red-team LayerNorm on every core: 0.35-0.41x against 0.21-0.23x on its share)."""
    from kb_data.harness import timed as timed_loop
    from kb_data.harness.session import cpu_threads
    from kb_data.rules import CHECKS

    ctx, cpu, share = {"overhead_ms": 1.0, "overhead_cpu_ms": 1.0}, torch.device("cpu"), cpu_threads()
    honest = timed_loop._batch_bound(4 * 20.0, 4, 18.0, True, ctx, CHECKS, cpu, False, cpu_ms=4 * 20.0 * share)
    assert "share_ms" not in honest
    greedy = timed_loop._batch_bound(4 * 20.0, 4, 18.0, True, ctx, CHECKS, cpu, False, cpu_ms=4 * 40.0 * share)
    assert greedy["share_ms"] == pytest.approx((40.0 * share - 1.0) / share)


def test_a_twin_that_cannot_be_kept_on_a_cpu_is_recorded_as_not_run(monkeypatch):
    """The timed repeat pair keeps a call's outputs and the reference's until its twin comes; on a CPU, where they
    stay beside the timed calls, a twin whose pair would pass the budget is not kept. That was a silent skip of the
    check (outputs over 1 GiB never had it); the record now says it did not run."""
    from kb_data.harness import timed as timed_loop
    from tests.harness_support import _judge

    problem = ProblemSet(SMALL_PROBLEMS).load(GELU)
    kept = _judge(problem, HONEST_GELU, trials=16, max_batch=4)
    assert kept["status"] == "ok" and "timed_repeat" not in kept["flag_details"], kept["flag_details"]
    monkeypatch.setattr(timed_loop, "TIMED_FP64_BYTES", 1)  # the first of the pair is always kept, its twin not
    dropped = _judge(problem, HONEST_GELU, trials=16, max_batch=4)
    assert dropped["flag_details"].get("timed_repeat", "").startswith("not run: the pair's outputs would not fit"), \
        dropped["flag_details"]


def test_the_judges_own_out_of_memory_names_the_stage(monkeypatch):
    """The judge running out of GPU memory is no verdict on the submission: the record says so, in which stage, and
    that the GPU may be too small for the problem (an 80 GB H100 on v0.1's largest problems, session 29)."""
    from kb_data.harness import timed as timed_loop
    from tests.harness_support import _judge

    def oom(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 7.00 GiB")

    monkeypatch.setattr(timed_loop, "judged_call", oom)
    res = _judge(ProblemSet(SMALL_PROBLEMS).load(GELU), HONEST_GELU, trials=4, max_batch=4)
    assert res["status"] == "runtime_error", (res["status"], res["error"])
    assert res["error"].startswith("CUDA out of memory in the judge in stage 'timing' (this GPU may be too small"), \
        res["error"]


def test_the_slowdown_backstop_compares_with_the_lower_of_a_baselines_medians():
    """The paired reference's batches are timed by their GPU work, so its figure alone before the submission loads is
    the lower of the baseline's graded median and its GPU-alone one (a host-bound reference's graded median, 1.5x its
    GPU work on an H100, would have widened the backstop by that much)."""
    from kb_data.harness.reference import paired_reference
    from kb_data.rules import rules_for
    ref = torch.nn.Identity()
    for measured, alone in (({"eager_ms": 12.9, "eager_gpu_ms": 8.3}, 8.3), ({"eager_ms": 12.9}, 12.9),
                            ({"eager_ms": 0.5, "eager_gpu_ms": 0.6}, 0.5)):
        res = {"baseline": {"baseline_type": "pytorch_eager", **measured}, "flag_details": {}}
        assert paired_reference(None, ref, rules_for("v3"), torch.device("cpu"), {"pair_reference": True}, res) is ref
        assert res["ref_alone_ms"] == alone and res["ref_paired_type"] == "pytorch_eager"
