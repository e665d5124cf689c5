"""Timing: device events queued behind an L2 flush, warm-up, median and spread.

A timed call on a GPU is `flush L2 -> start event -> call -> end event`, enqueued on the caller's stream with no
host sync in between (`timing_method()`: flush_queued): the GPU clears the L2 while the host runs the forward's
Python and launches its first kernel, so that launch latency stays out of the time, and the end event follows the
forward's last kernel on the device instead of a host wake-up. The device is synchronized after each call. Until 2026-12-01 the
device was also synchronized before the start and the end event ("device_synced"): 40-90 us of moving host latency
inside every call (BENCHMARKS.md, Stability).
Two kinds of work could leave the interval uncounted, and both are checked: work left running on another stream
when forward returns (the outputs are copied on the caller's stream right after the end event and must equal
the outputs after the sync: `Timing.late_calls`), and work on another stream that does not wait for the caller's
and so runs during the flush: it slows the flush, whose GPU time is taken in every call (`Timing.flush_ms`) and
compared with the same flush in the candidate's calibration calls (judge._flush_check).

The timer functions are captured when this module is imported, which the worker does
before it imports any submission; `timer_surface_changes()` reports what a submission
replaced afterwards. Timing always calls the captured originals.
"""
from __future__ import annotations

import functools
import os
import statistics
import time
from dataclasses import dataclass, field

import torch

_perf_counter = time.perf_counter
_cuda_sync = torch.cuda.synchronize
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time
_event_sync = torch.cuda.Event.synchronize
_spin = torch.cuda._sleep
# torch.Tensor's own methods, captured as the timer functions are: the harness's copies, flushes and reads in the
# candidate's process go through these, so a submission that replaces torch.Tensor's (to work inside the harness's
# copy of its inputs, or to skip the flush) or sets its own on one tensor changes no harness work
_zero_, _fill_, _copy_, _detach, _clone, _reshape, _sum, _item, _numel, _element_size = (
    torch.Tensor.zero_, torch.Tensor.fill_, torch.Tensor.copy_, torch.Tensor.detach, torch.Tensor.clone,
    torch.Tensor.reshape, torch.Tensor.sum, torch.Tensor.item, torch.Tensor.numel, torch.Tensor.element_size)



def manual_seed(seed: int) -> None:
    """torch.manual_seed for the generators a grading uses (CPU, CUDA). torch's own also defers a call for each
    backend never initialised (XPU, MTIA) and formats its caller's stack for it: about 1 ms, in every timed call."""
    torch.random.default_generator.manual_seed(seed)
    if torch.cuda.is_initialized() or torch.cuda.is_available():  # not yet initialised: seeded when it is
        torch.cuda.manual_seed_all(seed)


def _driver_call(name: str):
    """A CUDA driver function that takes no argument, bound now (before any submission loads); None without one."""
    import ctypes

    try:
        fn = getattr(ctypes.CDLL("libcuda.so.1"), name)
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_int, []
    return fn


# L2 lines a kernel marked persisting (an access-policy window within cudaLimitPersistingL2CacheSize) outlive a flush
# of normal lines: reset before each flush, they are flushed like any other (BENCHMARKS.md, session 41)
_reset_persisting_l2 = _driver_call("cuCtxResetPersistingL2Cache") if torch.version.cuda else None

L2_FLUSH_BYTES = 256 * 1024 * 1024  # > 4x the L2 of any current GPU (H100/H200: 50-60 MB, B200: 126 MB)

# 4x the largest L2 of a current x86 server core (2 MB): what the previous call left in the core's own caches. The
# shared L3 (32-480 MB) is out of reach of a flush before every call at a bearable cost; the ABBA order shares it out.
CPU_FLUSH_BYTES = 8 << 20
WARMUP_MS = 200.0
MAX_WARMUP_CALLS = 1000
# The rule's trial count is a floor: short kernels get more trials, until the timed loop has run this long,
# because 30 calls of a 50 us kernel are 1.5 ms of evidence and their median moves by several percent.
MIN_TIMED_MS = 100.0
# A paired loop (candidate and eager reference alternating) runs longer: its ratio is the record's speedup, whose
# noise this floor bounds (the reference graded as itself: BENCHMARKS.md, Noise).
MIN_PAIRED_MS = 400.0
MAX_TRIALS = 2000
# A timed call's outputs are copied right after its end event (the late-write check) while they are this small.
SNAPSHOT_MAX_BYTES = 1 << 30


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


def interpreter_hooks() -> dict:
    """The interpreter's profile and trace hooks (sys and threading): a hook runs code of its own around every
    call, the harness's copies of the inputs included, where no attribute of the timer changes."""
    import sys
    import threading

    return {"sys.setprofile": sys.getprofile(), "sys.settrace": sys.gettrace(),
            "threading.setprofile": threading.getprofile(), "threading.settrace": threading.gettrace()}


def hooks_changed(before: dict) -> list[str]:
    return [f"{name} (an interpreter hook)" for name, hook in interpreter_hooks().items() if hook is not before.get(name)]


def _default_device_mode() -> type | None:
    try:
        from torch.utils._device import DeviceContext
    except ImportError:
        return None
    return DeviceContext


_DEVICE_MODE = _default_device_mode()  # torch.set_default_device's mode, the only one an honest process leaves on


def modes_active() -> list[str]:
    """Torch function and dispatch modes left active on this thread (torch's own default-device mode aside): a mode
    sees every torch call the harness makes here, its copies of the inputs and outputs included, and can work there."""
    fn = [type(torch._C._get_function_stack_at(i)) for i in range(torch._C._len_torch_function_stack())]
    fn = [m for m in fn if m is not _DEVICE_MODE]
    n_dispatch = torch._C._len_torch_dispatch_stack()
    return ([f"a torch function mode ({fn[0].__qualname__[:60]}) left active"] if fn else []) + \
        ([f"a torch dispatch mode left active ({n_dispatch})"] if n_dispatch else [])


def timer_surface_changes(snap: dict) -> list[str]:
    changed = []
    for name, (owner, attr, fn, code) in snap.items():
        now = getattr(owner, attr, None)
        if now is not fn or getattr(now, "__code__", None) is not code:
            changed.append(name)
    return changed


def shadowed(obj) -> list[str]:
    """Names the object's own attributes set over its class's: a method replaced on this instance alone (the timer's
    `timed_batch`, the flush buffer's `zero_`, an output's `detach`) leaves the class, which the surface snapshot
    watches, as it was."""
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return []
    mro = type(obj).__mro__
    return sorted(n for n in own if isinstance(n, str) and any(n in vars(k) for k in mro))


@dataclass
class Timing:
    times_ms: list
    device: str
    flush_ms: list = field(default_factory=list)    # GPU ms of the L2 flush ahead of each timed call
    late_calls: list = field(default_factory=list)  # calls whose outputs changed after forward returned

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

    def __init__(self, device: torch.device, l2_flush: bool = True, flush_bytes: int | None = None):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.flush_buf = None
        self.queued_ms = None  # the last timed batch's host time to queue it
        self.phases = None  # on a GPU, where the last timed batch's GPU time went (timed_batch)
        self.flush_value = None
        self._cycles_per_ms = None
        if l2_flush:
            nbytes = flush_bytes or (L2_FLUSH_BYTES if self.cuda else CPU_FLUSH_BYTES)
            self.flush_buf = torch.empty(nbytes // 4, dtype=torch.int32, device=self.device)

    def flush(self, call: int = 0) -> None:
        """Zero the flush buffer, or fill it with `flush_value` + `call` (a CPU candidate's timed batch: the judge
        drew the value for it, and reads the buffer at secret places and moments: a flush skipped or cut short leaves
        another value, flushes skipped between the first and the last an earlier call's)."""
        if self.flush_buf is not None:
            if self.cuda and _reset_persisting_l2 is not None:
                _reset_persisting_l2()
            if self.flush_value is None:
                _zero_(self.flush_buf)
            else:
                _fill_(self.flush_buf, self.flush_value + call)

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
        kind = "cuda" if self.cuda else "cpu"
        timings = [Timing([], kind) for _ in calls]
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
                ms, out, snap, flush_ms = self._timed(calls[j], i)
                if snap is not None and not _same(snap, out):
                    timings[j].late_calls.append(i)
                del snap
                if (check, check_other)[j] is not None:
                    (check, check_other)[j](i, out)
                del out
                if i >= warmup:
                    timings[j].times_ms.append(ms)
                    if flush_ms is not None:
                        timings[j].flush_ms.append(flush_ms)
            i += 1
        return timings[0], (timings[1] if other is not None else None)

    def _timed(self, call, i: int):
        """One timed call: (ms, outputs, outputs as copied on the caller's stream right after the end event or None,
        ms the L2 flush ahead of it took on the GPU or None)."""
        if not self.cuda:
            t0 = _perf_counter()
            out = call(i)
            return (_perf_counter() - t0) * 1e3, out, None, None
        kept = {}

        def keep(out):  # the outputs, and their copy right after the end event (the late-write check)
            kept.update(out=out, snap=_snapshot(out))

        ((ms, flush_ms),) = self.timed_batch([(_nothing, lambda: call(i), keep)])  # a batch of one: synchronised
        return ms, kept["out"], kept["snap"], flush_ms

    def timed_batch(self, calls: list, hold=None, queued=None, open_first: bool = False,
                    head_start_ms: float = 0.0, aside=None) -> list[tuple]:
        """A batch of timed calls queued back to back and synchronised once, at the end: for each `(prepare, call,
        after)`, prepare() queues the call's input copies, then `flush -> start -> call() -> end`, then after(out)
        (the outputs' delivery, which copies them right after the end event: a write that lands later, from work
        left on another stream, makes the delivered outputs wrong), all on the caller's stream. The host runs ahead
        of the GPU, which the flushes and the earlier calls keep busy, so a call's interval holds its GPU work and
        not the pace of the process that launched it (the judge's and the candidate's differ). A call's outputs are
        not read after the next call is queued (a CUDA graph's replay rewrites them). `hold()`, on a GPU, queues a
        wait ahead of the batch; `queued()` returns when the batch may read its inputs: on a GPU after the whole
        batch is queued (`open_first`: before, so that the GPU runs at the host's pace), on a CPU before its first
        call. `head_start_ms`, on a GPU: a spin kernel that long ahead of the batch, the judge's equivalent of the
        candidate's gate (whose batch waits until it is queued, or QUEUE_WAIT_S): a forward whose host work outlasts
        its GPU work is then timed by its GPU work on both sides. Returns (ms, flush ms or None) per call, and sets
        `queued_ms`, the host's time to queue the batch, and `phases` (on a GPU): the GPU ms of the batch from its
        first prepare() to its last after() ("span"), and of each call's prepare() and after() ("prepare", "deliver":
        the copies), evidence of where a round trip's time went. `aside(fn)`, on a CPU, runs fn on another thread
        and waits for it: the calls' prepare() and after() then run there, and this thread does the flushes and the
        calls alone (the outputs are freed there too)."""
        got = []
        if not self.cuda:
            if queued is not None:
                queued()
            run = aside or _run_here
            for c, (prepare, call, after) in enumerate(calls):
                run(prepare)
                self.flush(c)
                t0 = _perf_counter()
                held = [call()]
                _touch(held[0])
                ms = (_perf_counter() - t0) * 1e3
                run(lambda: after(held.pop()))  # the outputs' last reference goes there too: their pages are freed aside
                got.append((ms, None))
            return got
        t0 = _perf_counter()
        if hold is not None:
            hold()
        elif head_start_ms > 0:
            _spin(int(head_start_ms * self.cycles_per_ms()))
        if queued is not None and open_first:
            queued()
        for prepare, call, after in calls:
            prepared, flushed, start, end, delivered = (_Event(enable_timing=True) for _ in range(5))
            _event_record(prepared)
            prepare()
            _event_record(flushed)
            self.flush()
            _event_record(start)
            out = call()
            _event_record(end)
            after(out)
            _event_record(delivered)
            del out
            got.append((prepared, flushed, start, end, delivered))
        self.queued_ms = (_perf_counter() - t0) * 1e3
        if queued is not None and not open_first:
            queued()
        _cuda_sync(self.device)  # all streams: nothing of the batch runs on once its times are read
        self.phases = {"span": _event_elapsed(got[0][0], got[-1][4]) if got else 0.0,
                       "prepare": [_event_elapsed(g[0], g[1]) for g in got],
                       "deliver": [_event_elapsed(g[3], g[4]) for g in got]}
        return [(_event_elapsed(start, end), _event_elapsed(flushed, start)) for _, flushed, start, end, _ in got]


    def run_gpu_alone(self, call, *, trials: int, prepare=None, warmup: int = 3) -> "GpuAlone":
        """The GPU's work of `call` without the host's: each timed call as in `_timed`, with a spin kernel queued
        between the flush and the start event that outlasts the host's work for the call (HEAD_START_*), so the
        host has enqueued the whole forward before the GPU reaches the start event. Every trial checks that it
        did (its host time under the spin's GPU time); the head start grows when one did not, and a forward that
        waits for the GPU (a host sync) ends with `error` and no median. A fixed count of `trials`: with the
        host out, a call's time barely varies."""
        if not self.cuda:
            return GpuAlone([], None, "not a GPU")
        cycles_per_ms = self.cycles_per_ms()
        head_ms = HEAD_START_MIN_MS
        for _ in range(HEAD_START_ATTEMPTS):
            times, i = [], 0
            while len(times) < trials:
                if prepare is not None:
                    prepare(i)
                flushed, start, end = (_Event(enable_timing=True) for _ in range(3))
                self.flush()
                _event_record(flushed)  # after the flush: flushed -> start is the spin alone
                t0 = _perf_counter()
                _spin(int(head_ms * cycles_per_ms))
                _event_record(start)
                out = call(i)
                _event_record(end)
                host_ms = (_perf_counter() - t0) * 1e3
                _cuda_sync(self.device)
                del out
                if host_ms >= HEAD_START_MARGIN * _event_elapsed(flushed, start):  # not covered: the GPU may have waited for the host
                    break
                if i >= warmup:
                    times.append(_event_elapsed(start, end))
                i += 1
            else:
                return GpuAlone(times, head_ms, None)
            if host_ms > HEAD_START_MAX_MS:
                break
            head_ms = min(HEAD_START_MAX_MS, max(2 * head_ms, HEAD_START_FACTOR * host_ms))
        return GpuAlone([], head_ms, f"the host's work for one call ({host_ms:.1f} ms) outlasted a head start of "
                        f"{head_ms:.1f} ms on the GPU: the forward waits for the GPU (a host sync) or enqueues more "
                        f"than the launch queue holds")

    def cycles_per_ms(self) -> float:
        """_spin_rate, timed once per Timer."""
        if self._cycles_per_ms is None:
            self._cycles_per_ms = self._spin_rate()
        return self._cycles_per_ms

    def _spin_rate(self) -> float:
        """Spin-kernel cycles per GPU millisecond, timed here (the SM clock moves with the GPU's state)."""
        n = 2_000_000
        rates = []
        for _ in range(3):
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            _event_record(start)
            _spin(n)
            _event_record(end)
            _cuda_sync(self.device)
            rates.append(n / max(_event_elapsed(start, end), 1e-3))
        return max(rates)  # the fastest clock seen: a spin sized by it lasts at least as long as asked


# The head start ahead of a GPU-alone call: at least 10 ms, and HEAD_START_FACTOR times the host's work for a call
# when that was longer (level-4 models enqueue for tens of ms); a trial counts only if the host's work took under
# HEAD_START_MARGIN of the spin's GPU time (the launch queue's latency to the GPU is microseconds).
HEAD_START_MIN_MS = 10.0
HEAD_START_FACTOR = 3.0
HEAD_START_MARGIN = 0.9
HEAD_START_MAX_MS = 2000.0
HEAD_START_ATTEMPTS = 4


@dataclass
class GpuAlone:
    times_ms: list
    head_start_ms: float | None
    error: str | None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times_ms) if self.times_ms else None


def _run_here(fn):
    return fn()


def _nothing() -> None:
    return None


def _tensors(out) -> list:
    return [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]


def _touch(out) -> None:
    """Read a value of every page of the outputs, inside the timed interval: memory that fills itself when first read
    (a fault handler: adversarial/segv_lazy_output_gelu) does its work here, not in the untimed copy that follows."""
    for t in _tensors(out):
        if t.device.type == "cpu" and _numel(t):
            _item(_sum(_reshape(_detach(t), -1)[::max(1, 4096 // _element_size(t))]))


def _snapshot(out) -> list | None:
    ts = _tensors(out)
    if not ts or sum(_numel(t) * _element_size(t) for t in ts) > SNAPSHOT_MAX_BYTES:
        return None
    return [_clone(_detach(t)) for t in ts]


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """The same shape, dtype and bytes (NaN included), compared as the widest words both align to (a CPU compares
    8-byte words six times as fast as bytes)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    x, y = (t.detach().reshape(-1).view(torch.uint8) for t in (a, b))
    for word in (torch.int64, torch.int32):
        n = word.itemsize
        if x.numel() % n == 0 and x.storage_offset() % n == 0 and y.storage_offset() % n == 0:
            return torch.equal(x.view(word), y.view(word))
    return torch.equal(x, y)


def _same(snap: list, out) -> bool:
    """The outputs as copied when forward returned and as they are after the sync, bitwise (NaN included)."""
    ts = _tensors(out)
    return len(ts) == len(snap) and all(bitwise_equal(a, b) for a, b in zip(snap, ts))


def timing_method(device) -> str:
    """What this harness's times on `device` are, in the schema's terms (kb_data.schema.TIMING_METHODS)."""
    return "flush_queued" if torch.device(device).type == "cuda" else "perf_counter"


def paired_ratio(subject: Timing, other: Timing) -> float | None:
    """Median over the paired loop's iterations of other / subject: the two calls of one iteration run next to
    each other, so the GPU's clock and power state, which moves absolute times within seconds, cancels within
    each pair (a smaller run-to-run spread than the ratio of the two medians)."""
    ratios = [o / s for s, o in zip(subject.times_ms, other.times_ms) if s > 0]  # 0: under the timer's resolution
    return statistics.median(ratios) if ratios else None


# Fixed GPU work timed in every sweep chunk (the rows' `calibration`): machines of one kind run the same problems
# several percent apart, so a stored median says little without a figure of the machine that took it. One figure
# per resource a reference leans on.
CALIBRATION_WORK = {
    "gemm_ms": "float32 matmul, 4096 x 4096 by 4096 x 4096 (compute)",
    "copy_ms": "device-to-device copy of 1 GiB (memory bandwidth)",
    "launch_ms": "64 additions on a one-element tensor in one call (the host's kernel-launch rate)",
}


def calibrate(device, warmup_ms: float = 100.0, min_timed_ms: float = 50.0) -> dict | None:
    """CALIBRATION_WORK timed as every reference is (Timer.run): {figure: median ms}; None off a GPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    gen = torch.Generator(device=device).manual_seed(0)
    a, b = (torch.randn(4096, 4096, device=device, generator=gen) for _ in range(2))
    src = torch.empty(1 << 28, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    one = torch.zeros(1, device=device)
    gemm_out = dst[:4096 * 4096].view(4096, 4096)

    # the calls return nothing: the timer would copy their outputs for the late-write check
    def gemm(_i):
        torch.mm(a, b, out=gemm_out)

    def copy(_i):
        dst.copy_(src)

    def adds(_i):
        x = one
        for _ in range(64):
            x = x + 1

    calls = {"gemm_ms": gemm, "copy_ms": copy, "launch_ms": adds}
    timer = Timer(device)
    return {name: timer.run(call, warmup=3, trials=10, warmup_ms=warmup_ms, min_timed_ms=min_timed_ms).median_ms
            for name, call in calls.items()}


CPU_PEAK_REPEATS = 5
ROOFLINE_COPY_BYTES = 64 << 20  # the copy measured for the CPU roofline (a cache-fed rate only lowers its floor)


def _best_rate(call, work: float) -> float:
    """work / seconds of the fastest of CPU_PEAK_REPEATS calls, in this thread's CPU time (a host busy with other work
    deschedules the thread, which a wall clock would count)."""
    best = 0.0
    for _ in range(CPU_PEAK_REPEATS):
        t = time.thread_time()
        call()
        best = max(best, work / max(time.thread_time() - t, 1e-9))
    return best


@functools.cache
def cpu_peaks() -> dict:
    """Upper bounds of this CPU's peaks: one core's GEMM rate (float32, and the best of float32 and bfloat16, GFLOP/s) and copy bandwidth
    (GB/s, bytes read plus written) times the cores. No table knows the grading machine's CPU, so its roofline is
    measured, once per process, in the trusted parent (never in a sandbox); on one thread and in its CPU time, so that
    a loaded host lowers no figure (which would raise the floor an honest kernel is held to), and times the cores,
    which no kernel's bandwidth or GEMM rate exceeds."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        def gemm(dtype, n):
            a, b, out = torch.ones(n, n, dtype=dtype), torch.ones(n, n, dtype=dtype), torch.empty(n, n, dtype=dtype)
            return _best_rate(lambda: torch.mm(a, b, out=out), 2 * n ** 3 / 1e9)

        fp32, bf16 = gemm(torch.float32, 512), gemm(torch.bfloat16, 128)
        if bf16 >= fp32 / 4:  # a fast bfloat16 path (without one, a large GEMM would take seconds and be no peak)
            bf16 = max(bf16, gemm(torch.bfloat16, 512))
        src = torch.ones(ROOFLINE_COPY_BYTES // 4, dtype=torch.float32)
        dst = torch.empty_like(src)
        copy = _best_rate(lambda: dst.copy_(src), 2 * src.numel() * 4 / 1e9)
        cores = os.cpu_count() or 1
        return {"gemm_gflops": max(fp32, bf16) * cores, "gemm_gflops_fp32": fp32 * cores, "copy_gbs": copy * cores}
    finally:
        torch.set_num_threads(threads)


def synchronize(device: torch.device) -> None:
    if torch.device(device).type == "cuda":
        _cuda_sync(device)
