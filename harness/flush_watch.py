"""The timer's CPU flush buffer watched where the candidate cannot reach: its mappings and its words read from the
sandbox's memory (/proc) at secret moments of each timed batch and at its end, beside the forward thread's CPU
clock."""
from __future__ import annotations

import os
import secrets
import struct
import threading
import time

import torch

from kb_data.harness.procfs import mappings, schedstat_ms


def foreign_pages(pid: int, lo: int, hi: int) -> str | None:
    """None when [lo, hi) of process `pid` is all private anonymous memory (how the timer's flush buffer is
    allocated), else what maps it otherwise: a shared or file mapping lets many of its pages be one physical page,
    and a flush over them then evicts nothing. OSError when the map cannot be read."""
    at = lo
    for start, end, _, ident, path, perms in mappings(pid):
        if end <= at or start >= hi:
            continue
        if start > at:
            return f"{at:#x}-{start:#x} is not mapped"
        anonymous = ident[1] == 0 and (path in ("", "[heap]") or path.startswith("[anon:"))
        if not anonymous or not perms.endswith("p"):
            kind = "shared" if perms.endswith("s") else "private"
            return f"{start:#x}-{end:#x} is a {kind} mapping of {path or 'no file'!r}"
        at = end
        if at >= hi:
            return None
    return f"{at:#x}-{hi:#x} is not mapped"


def words_at(pid: int, addrs: list[int]) -> list[int]:
    """The int32 at each of `addrs` in process `pid`'s memory (/proc/PID/mem: the judge's root, or its uid with the
    process still dumpable). OSError when it cannot be read."""
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as f:
        out = []
        for a in addrs:
            f.seek(a)
            word = f.read(4)
            if len(word) != 4:
                raise OSError(f"{a:#x}: {len(word)} of 4 bytes read")
            out.append(struct.unpack("<i", word)[0])
        return out


MOMENTS = 24  # a timed batch's flush watch reads the buffer this many times in a batch as long as the last, on average
MAP_READS = 8  # ... and the maps this many of them
FLUSH_WORDS = 64  # words of the flush buffer read back at the batch's end, at secret places
FLUSH_WORDS_MID = 8  # ... and at each secret moment of the batch
FLUSH_LAG_CALLS = 1.5  # calls a moment's flush may stand behind the calls whose share of the batch's forward CPU was spent
FLUSH_LAG_SHARE = 0.25  # ... and this share of them (a call's CPU varies: a garbage collection in one, say)
OUTPUT_READS = 4  # elements of each delivered call's output slots read once a poll sees it delivered
OUTPUT_POLL_S = 0.0008  # the flush buffer's progress is polled every uniform [0, this] s until the last call flushes
WATCH_NICE = -10  # the watch thread's nice value, where the judge may set it (real-time polls slowed honest GELU 1/3)


class FlushWatch:
    """The timer's flush buffer, [lo, hi) of some processes' memory, watched over one timed batch: FLUSH_WORDS_MID
    words at secret places and the forward thread's CPU clock (`clock`, its schedstat file) read at moments drawn in
    secret (MOMENTS on average over `within_ms`, the batch's expected length) from start(), and the maps at MAP_READS
    of them; at stop(), FLUSH_WORDS words at secret places must hold the batch's last call's flush value (call c of a
    batch writes `value` + c). stop() returns the first thing found (a foreign mapping, foreign_pages; a word that is
    not the last value; a moment whose latest flush stood more than FLUSH_LAG_CALLS calls and FLUSH_LAG_SHARE of them
    behind those whose share of the batch's forward CPU was spent by then; an output element read once its call was
    delivered that is not what the judge took at the batch's end), or None. A mapping undone before each
    reply is still read mid-batch; a flush skipped or cut short leaves other words, flushes skipped between the first
    and the last leave earlier ones, and outputs written after their calls (work done outside every timed interval)
    differ from what their slots held once delivered. `outputs`: each call's output slots (the judge's mapping of the
    shared memory the candidate delivers into), read as soon as a poll of the buffer shows a later call flushing
    (`value` + that call: the calls before it were delivered)."""

    def __init__(self, pids: list[int], lo: int, hi: int, within_ms: float, clock: str | None = None,
                 outputs: list[list] | None = None, value: int | None = None):
        self.pids, self.lo, self.hi, self.clock = list(pids), lo, hi, clock
        self.gap_s = max(within_ms, 1.0) / 1e3 * 2 / MOMENTS  # the mean of a uniform draw in [0, gap_s]
        self.found: str | None = None
        self.moments: list[tuple[float, list[int]]] = []  # (forward CPU ms since start, words read)
        self.outputs = [[_bytes_of(t) if t.is_contiguous() else None for t in slots] for slots in outputs or []]
        self.output_reads: list[tuple[int, int, int, bytes]] = []  # (call, output, element, its bytes)
        self.value, self._delivered = value, 0  # the batch's first flush value; its calls delivered as the polls saw
        self._polling = value is not None and len(self.outputs) > 1
        self._clock0 = self._mem = None  # the first process's memory, open while the batch's progress is polled
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._at_random, name="kb-flush-watch", daemon=True)

    def start(self) -> None:
        self._clock0 = self._forward_ms()
        self._thread.start()

    def _forward_ms(self) -> float | None:
        try:
            return schedstat_ms(self.clock)
        except (TypeError, OSError, ValueError, IndexError):
            return None

    def _at_random(self) -> None:
        try:  # woken ahead of the sandbox's threads on a loaded host: a no-work batch's window is a millisecond or two
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WATCH_NICE)
        except OSError:  # not root: the host's scheduler decides
            pass
        draw, clock = secrets.SystemRandom(), time.monotonic
        moment = clock() + draw.uniform(0.0, self.gap_s)
        while self.found is None and not self._done.wait(
                max(0.0, min(moment - clock(), draw.uniform(0.0, OUTPUT_POLL_S) if self._polling else self.gap_s))):
            if self._polling:
                self._poll_delivered(draw)
            if clock() >= moment:
                self._check(moment=True)
                moment = clock() + draw.uniform(0.0, self.gap_s)

    def _poll_delivered(self, draw) -> None:
        """One word of the flush buffer (the first process's); where it shows a call flushing that no poll had seen,
        OUTPUT_READS elements of the output slots of the calls delivered since the last such poll, and as many of
        one delivered before them."""
        try:
            if self._mem is None:
                self._mem = os.open(f"/proc/{self.pids[0]}/mem", os.O_RDONLY)
            raw = os.pread(self._mem, 4, self.lo + 4 * draw.randrange((self.hi - self.lo) // 4))
        except OSError:
            return  # the end's reads say what is wrong with the process
        flushing = struct.unpack("<i", raw)[0] - self.value if len(raw) == 4 else -1
        if not self._delivered < flushing < len(self.outputs):
            return
        earlier = [draw.randrange(self._delivered)] if self._delivered else []
        for c in list(range(self._delivered, flushing)) + earlier:
            slots = [(k, slot) for k, slot in enumerate(self.outputs[c]) if slot is not None and slot[0].numel()]
            for _ in range(OUTPUT_READS if slots else 0):
                k, (raw_out, size) = draw.choice(slots)
                e = draw.randrange(raw_out.numel() // size)
                self.output_reads.append((c, k, e, bytes(raw_out[e * size:(e + 1) * size].tolist())))
        self._delivered = flushing
        if flushing == len(self.outputs) - 1:  # the last call's: every other call is read
            self._polling = False

    def _check(self, value: int | None = None, moment: bool = False) -> None:
        draw = secrets.SystemRandom()
        for pid in self.pids:
            try:
                maps = not moment or draw.random() < MAP_READS / MOMENTS
                why = foreign_pages(pid, self.lo, self.hi) if maps else None
                words = FLUSH_WORDS if value is not None else FLUSH_WORDS_MID if moment else 0
                addrs = sorted(self.lo + 4 * draw.randrange((self.hi - self.lo) // 4) for _ in range(words))
                now = self._forward_ms() if moment else None  # before the words: they are at least as far on
                got = words_at(pid, addrs) if why is None and addrs else []
                if got and now is not None and self._clock0 is not None:
                    self.moments.append((now - self._clock0, got))
                if value is not None and why is None:
                    wrong = [(a - self.lo, w) for a, w in zip(addrs, got) if w != value]
                    why = (f"{len(wrong)} of {FLUSH_WORDS} words read at secret places did not hold the batch's last "
                           f"flush value {value} (a flush skipped or cut short; (byte offset, word): {wrong[:4]})"
                           if wrong else None)
            except (FileNotFoundError, ProcessLookupError):
                continue  # the process is gone: the grading ends on that
            except OSError as e:  # memory it made unreadable (a process no longer dumpable) is not read as clean
                why = f"its memory could not be read ({e})"
            if why and self.found is None:
                self.found = f"process {pid}: {why}"

    def stop(self, claims: list[float] = (0.0,), taken: list | None = None) -> str | None:
        """What the watch found over the batch (its flush values checked where it was given `value`); `claims` its
        claimed ms per call, by which the batch's forward CPU is shared among its calls (each with an equal share of
        what the claims leave unexplained: the flushes and the glue), so that a batch whose work is front-loaded is not
        taken for one whose flushes were skipped; `taken`, each call's outputs as the judge copied them at the batch's
        end (None where it could not), against which the elements read at the polls are held."""
        value = self.value
        self._done.set()
        self._thread.join()
        if self._mem is not None:
            os.close(self._mem)
        calls = len(claims)
        total = self._forward_ms() if self._clock0 is not None else None
        self._check(None if value is None else value + calls - 1)
        if value is not None and total is not None and total > self._clock0 and self.found is None:
            spent_all = total - self._clock0
            rest = max(0.0, spent_all - sum(claims)) / calls
            by_claims = [c + rest for c in claims]
            for spent, words in self.moments:
                latest = max((w - value for w in words if value <= w < value + calls), default=-1)
                # the fewer of the two: a claim is wall time, which a loaded host stretches in the calls it preempts
                # (CPU they did not spend), and an even share takes a front-loaded batch's first call for several
                due = min(_calls_due(spent, by_claims, spent_all), _calls_due(spent, [1.0] * calls, spent_all))
                if latest + 1 < due * (1 - FLUSH_LAG_SHARE) - FLUSH_LAG_CALLS:
                    self.found = (f"a moment of the batch found its flush buffer at call {latest} of {calls} (-1: "
                                  f"none of this batch) after {spent:.3g} ms of the forward thread's {spent_all:.3g}, "
                                  f"the share of {due:.3g} calls: flushes between were skipped")
                    break
        if value is not None and taken is not None and self.found is None:
            self.found = self._outputs_changed(taken)
        return self.found

    def _outputs_changed(self, taken: list) -> str | None:
        """The first output element read once its call was delivered that differs from what the judge took."""
        for c, k, e, seen in self.output_reads:
            outs = taken[c] if c < len(taken) else None
            if outs is None or k >= len(outs) or not isinstance(outs[k], torch.Tensor):
                continue
            raw, size = _bytes_of(outs[k])
            if bytes(raw[e * size:(e + 1) * size].tolist()) != seen:
                return (f"call {c}'s output {k}, element {e}, read once a later call of the batch flushed (so after "
                        f"call {c}'s outputs were delivered), was not what the judge took at the batch's end: the "
                        "output was written after its timed call")
        return None


def _bytes_of(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """A contiguous tensor's storage as bytes (a flat uint8 view: no copy) and its element size."""
    return t.detach().reshape(-1).view(torch.uint8), t.element_size()


def _calls_due(spent: float, weights: list[float], spent_all: float) -> float:
    """Calls whose share of the batch's forward CPU (`spent_all`, shared in proportion to `weights`) was spent after
    `spent` ms of it, the current one in part."""
    total = sum(weights)
    shares = [w / total * spent_all for w in weights] if total > 0 else [spent_all / len(weights)] * len(weights)
    due, left = 0.0, spent
    for share in shares:
        due += min(1.0, left / share) if share > 0 else 1.0
        left -= share
        if left <= 0:
            break
    return due
