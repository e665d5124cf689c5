"""Shared scaffolding for the session-48 red-team probes of the process sandbox's pause (s48_rt_*.py): a judge
dropped to a user's uid (tests/test_sandbox_user._as_a_user) pauses the sandbox through its first process
(Sandbox.signal_tree) N times and counts the told pauses in which shared counters moved. Not a probe itself.
Run the probes as root from the repo root:  PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_<name>.py"""
from __future__ import annotations

import ctypes
import mmap
import os
import tempfile
import time
from pathlib import Path

from kb_data.io import remove_tree
from tests.test_sandbox_user import _as_a_user

SLOTS = 16
count = mmap.mmap(-1, 8 * SLOTS)  # made before any fork: shared by the judge and every sandboxed process


def bump(slot: int, n: int) -> None:
    count[8 * slot:8 * slot + 8] = n.to_bytes(8, "little")


def counters() -> list[int]:
    return [int.from_bytes(count[8 * s:8 * s + 8], "little") for s in range(SLOTS)]


libc = ctypes.CDLL(None, use_errno=True)


def pause_loop(pauses: int, during=None, hold_s: float = 0.05, settle_s: float = 0.01, gap_s: float = 0.03):
    """A `look` for _as_a_user: `pauses` pauses; in each told one, `during(sb)` runs (what the judge does in a real
    pause), then the counters are compared across hold_s."""
    def look(sb, got):
        told, moved, moved_slots, unacked, acked_ms, work_ms = 0, 0, {}, 0, [], []
        for _ in range(pauses):
            t0 = time.monotonic()
            ok = sb.signal_tree(stop=True)
            acked_ms.append((time.monotonic() - t0) * 1e3)
            if not ok:
                unacked += 1
                sb.signal_tree(stop=False)
                time.sleep(gap_s)
                continue
            told += 1
            time.sleep(settle_s)  # a process stopped mid-update settles (nothing should run after this)
            before = counters()
            if during is not None:
                during(sb)
            t1 = time.perf_counter()
            _work()  # a stand-in for the reference's timed calls: pure Python, ~20 ms alone
            work_ms.append((time.perf_counter() - t1) * 1e3)
            time.sleep(hold_s)
            after = counters()
            if after != before:
                moved += 1
                for s, (a, b) in enumerate(zip(before, after)):
                    if a != b:
                        moved_slots[s] = moved_slots.get(s, 0) + (a - b) * -1
            sb.signal_tree(stop=False)
            time.sleep(gap_s)
        acked_ms.sort()
        work_ms.sort()
        return {"got": got, "pauses": pauses, "told": told, "unacked (would count: check_failed)": unacked,
                "told pauses with counters moving": moved, "counters' sum at the end (they ran at all)": sum(counters()), "increments while told, by slot": moved_slots,
                "ack ms median/max": [round(acked_ms[len(acked_ms) // 2], 2), round(acked_ms[-1], 2)],
                "judge's work in told pauses, ms median": round(work_ms[len(work_ms) // 2], 2) if work_ms else None}
    return look


def _work(n: int = 400_000) -> int:
    x = 0
    for i in range(n):
        x += i * i
    return x


def run(uid: int, serve, look) -> dict:
    assert 61_100 <= uid < 61_200
    base = Path(tempfile.mkdtemp(prefix="kb-user-"))
    os.chown(base, uid, uid)
    try:
        return _as_a_user(uid, base, serve, look)
    finally:
        remove_tree(base)


def spin(slot: int, seconds: float = 120, extra=None) -> None:
    """Count as fast as it can in `slot` (calling extra() each turn), for `seconds`."""
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += 1
        bump(slot, n)
        if extra is not None:
            extra()
    os._exit(0)


def idle(sock) -> None:
    while True:
        time.sleep(60)
