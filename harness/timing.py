"""Timing: device events with the device synchronized, warm-up, L2 flush, median and spread.

The timer functions are captured when this module is imported, which the worker does
before it imports any submission; `timer_surface_changes()` reports what a submission
replaced afterwards. Timing always calls the captured originals.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

_perf_counter = time.perf_counter
_cuda_sync = torch.cuda.synchronize
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time
_event_sync = torch.cuda.Event.synchronize

L2_FLUSH_BYTES = 256 * 1024 * 1024  # > 4x the L2 of any current GPU (H100/H200: 50-60 MB, B200: 126 MB)
WARMUP_MS = 200.0
MAX_WARMUP_CALLS = 1000
# The rule's trial count is a floor: short kernels get more trials, until the timed loop has run this long,
# because 30 calls of a 50 us kernel are 1.5 ms of evidence and their median moves by several percent.
MIN_TIMED_MS = 100.0
# A paired loop (candidate and eager reference alternating) runs longer: its ratio is the record's speedup. On the
# H200 the reference graded as itself landed 34/42 runs within 1.00 +/- 0.02 with a 100 ms floor, 39/42 with 400 ms.
MIN_PAIRED_MS = 400.0
MAX_TRIALS = 2000


def _surface() -> dict:
    """Every callable a submission could patch to fake a time, by a dotted name."""
    import time as time_mod

    items = {
        "time.perf_counter": (time_mod, "perf_counter"),
        "time.perf_counter_ns": (time_mod, "perf_counter_ns"),
        "time.time": (time_mod, "time"),
        "time.monotonic": (time_mod, "monotonic"),
        "torch.cuda.synchronize": (torch.cuda, "synchronize"),
        "torch.cuda.Event": (torch.cuda, "Event"),
        "torch.cuda.Event.record": (torch.cuda.Event, "record"),
        "torch.cuda.Event.elapsed_time": (torch.cuda.Event, "elapsed_time"),
        "torch.cuda.Event.synchronize": (torch.cuda.Event, "synchronize"),
        "torch.cuda.Stream.synchronize": (torch.cuda.Stream, "synchronize"),
        "torch.allclose": (torch, "allclose"),
        "torch.equal": (torch, "equal"),
        "torch.Tensor.__eq__": (torch.Tensor, "__eq__"),
        "torch.manual_seed": (torch, "manual_seed"),
    }
    return items


def snapshot_surface(extra: dict | None = None) -> dict:
    """Identity (and code object) of every timer and harness function, taken before the submission loads."""
    snap = {}
    for name, (owner, attr) in {**_surface(), **(extra or {})}.items():
        fn = getattr(owner, attr, None)
        snap[name] = (owner, attr, fn, getattr(fn, "__code__", None))
    return snap


def timer_surface_changes(snap: dict) -> list[str]:
    changed = []
    for name, (owner, attr, fn, code) in snap.items():
        now = getattr(owner, attr, None)
        if now is not fn or getattr(now, "__code__", None) is not code:
            changed.append(name)
    return changed


@dataclass
class Timing:
    times_ms: list
    device: str

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    def quantile_ms(self, q: float) -> float:
        xs = sorted(self.times_ms)
        if len(xs) == 1:
            return xs[0]
        pos = q * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    @property
    def p10_ms(self) -> float:
        return self.quantile_ms(0.10)

    @property
    def p90_ms(self) -> float:
        return self.quantile_ms(0.90)


class Timer:
    """Times `call(i)` calls; `prepare(i)` and `check(i, out)` run outside the timed region."""

    def __init__(self, device: torch.device, l2_flush: bool = True):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.flush_buf = None
        if l2_flush:
            nbytes = L2_FLUSH_BYTES if self.cuda else 64 * 1024 * 1024
            self.flush_buf = torch.empty(nbytes // 4, dtype=torch.int32, device=self.device)

    def flush(self) -> None:
        if self.flush_buf is not None:
            self.flush_buf.zero_()

    def run(self, call, *, warmup: int, trials: int, prepare=None, check=None, warmup_ms: float = WARMUP_MS,
            min_timed_ms: float = MIN_TIMED_MS) -> Timing:
        """`warmup` untimed calls, and more until `warmup_ms` of wall time has passed (an idle GPU runs at
        low clocks and needs tens of ms of work to reach its boost clock), then `trials` timed calls or more
        (MIN_TIMED_MS)."""
        return self.run_paired(call, None, warmup=warmup, trials=trials, prepare=prepare, check=check,
                               warmup_ms=warmup_ms, min_timed_ms=min_timed_ms)[0]

    def run_paired(self, subject, other, *, warmup: int, trials: int, prepare=None, check=None, check_other=None,
                   warmup_ms: float = WARMUP_MS, min_timed_ms: float = MIN_TIMED_MS) -> tuple[Timing, Timing | None]:
        """Time `subject` and, when given, `other` in alternating trials (ABBA order), so that clock,
        thermal and L2 drift fall on both alike and their ratio stays put. `check(i, out)` sees the
        subject's outputs, `check_other(i, out)` the other's."""
        calls = [subject] + ([other] if other is not None else [])
        times: list[list[float]] = [[] for _ in calls]
        if self.cuda and warmup_ms > 0:
            t0 = _perf_counter()
            i = 0
            while i < warmup or ((_perf_counter() - t0) * 1e3 < warmup_ms and i < MAX_WARMUP_CALLS):
                for call in calls:
                    if prepare is not None:
                        prepare(i)
                    call(i)
                    _cuda_sync(self.device)
                i += 1
            warmup = 0
        t0, i = _perf_counter(), 0
        while i < warmup + trials or (self.cuda and (_perf_counter() - t0) * 1e3 < min_timed_ms and i < MAX_TRIALS):
            for j in (range(len(calls)) if i % 2 == 0 else reversed(range(len(calls)))):
                if prepare is not None:
                    prepare(i)
                ms, out = self._timed(calls[j], i)
                if (check, check_other)[j] is not None:
                    (check, check_other)[j](i, out)
                del out
                if i >= warmup:
                    times[j].append(ms)
            i += 1
        kind = "cuda" if self.cuda else "cpu"
        return Timing(times[0], kind), (Timing(times[1], kind) if other is not None else None)

    def _timed(self, call, i: int):
        self.flush()
        if self.cuda:
            _cuda_sync(self.device)
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            _event_record(start)
            out = call(i)
            _cuda_sync(self.device)  # all streams: work left on a side stream is still counted
            _event_record(end)
            _event_sync(end)
            return _event_elapsed(start, end), out
        t0 = _perf_counter()
        out = call(i)
        return (_perf_counter() - t0) * 1e3, out


def paired_ratio(subject: Timing, other: Timing) -> float | None:
    """Median over the paired loop's iterations of other / subject: the two calls of one iteration run next to
    each other, so the GPU's clock and power state, which moves absolute times by 10-50% within seconds on the
    H200, cancels within each pair. On the H200 this estimator's run-to-run spread was about half that of the
    ratio of the two medians (BENCHMARKS.md, Noise)."""
    ratios = [o / s for s, o in zip(subject.times_ms, other.times_ms) if s > 0]  # 0: under the timer's resolution
    return statistics.median(ratios) if ratios else None


def synchronize(device: torch.device) -> None:
    if torch.device(device).type == "cuda":
        _cuda_sync(device)
