"""Reading a process's or thread's figures from /proc, cheaply enough for the judge's timed loops."""
from __future__ import annotations

import os
import signal
import time


def read_text(path: str) -> str:
    """A /proc file as text. What a sandbox names (its threads' names, its files' paths) comes raw, in any bytes:
    these stay as surrogate escapes, which os functions take back as the same bytes (a strict decode raised, and a
    process named in bytes that are no UTF-8 was skipped as gone by every scan, and blinded the sampler: red team,
    session 42)."""
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape")


def mappings(pid: int | str):
    """(start, end, file offset, (device, inode), path, permissions as "rwxp") of each of a process's mappings."""
    for line in read_text(f"/proc/{pid}/maps").splitlines():
        parts = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        yield (lo, hi, int(parts[2], 16), (parts[3], int(parts[4])), parts[5].strip() if len(parts) > 5 else "",
               parts[1])


def status_field(status: str, name: str) -> str:
    """One field of /proc/PID/status ("PPid", "Uid"), without parsing the other fifty (scanned in timed loops)."""
    at = status.index(f"\n{name}:\t") + len(name) + 3
    return status[at:status.index("\n", at)]


def schedstat_ms(path: str) -> float:
    """A thread's CPU time so far, in ms, from its /proc/PID/task/TID/schedstat (ns). OSError, ValueError or
    IndexError when it cannot be read."""
    return int(read_text(path).split()[0]) / 1e6


def inner_id(status_path: str) -> int | None:
    """The id of a process or thread (its /proc status file) in its innermost PID namespace; None if it is gone."""
    try:
        return int(status_field(read_text(status_path), "NSpid").split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def parent_and_inner_pid(pid: int) -> tuple[int, int] | None:
    """(parent pid, pid in its innermost PID namespace) of a process, from its status; None if it is gone."""
    try:
        st = read_text(f"/proc/{pid}/status")
        return int(status_field(st, "PPid")), int(status_field(st, "NSpid").split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """A process's start time (clock ticks since boot: /proc/PID/stat's 22nd field), which no process can change."""
    try:
        return int(read_text(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


SIGSTOP_PENDING = 1 << (signal.SIGSTOP - 1)  # its bit in /proc/PID/status's pending-signal masks


def stopped(pid: int) -> bool | None:
    """Whether no thread of a process can run on: each stopped or traced, dead, or in uninterruptible sleep (where no
    user code runs: a vfork's parent) with its stop to come (SIGSTOP pending, or a thread of it already stopped, a
    group stop under way); None if it is gone."""
    try:
        states = [(status_field(st, "State")[0], int(status_field(st, "SigPnd"), 16) | int(status_field(st, "ShdPnd"), 16))
                  for st in (read_text(f"/proc/{pid}/task/{tid}/status") for tid in os.listdir(f"/proc/{pid}/task"))]
    except (OSError, ValueError, IndexError):
        return None
    halted = any(state in "Tt" for state, _ in states)
    return all(state in "TtZXx" or (state == "D" and (halted or pending & SIGSTOP_PENDING)) for state, pending in states)


def thread_moves(pid: int) -> dict:
    """Per thread of a process (by tid): its state's letter and its context switches so far (voluntary and not),
    which a thread that stays stopped does not move; a thread that ended as it was read is left out. OSError,
    ValueError or IndexError when the process cannot be read."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            st = read_text(f"/proc/{pid}/task/{tid}/status")
        except FileNotFoundError:
            continue
        out[int(tid)] = (status_field(st, "State")[0], int(status_field(st, "voluntary_ctxt_switches"))
                         + int(status_field(st, "nonvoluntary_ctxt_switches")))
    return out


def threads_cpu_ns(pid: int) -> int:
    """The CPU time so far of a process's live threads (each one's schedstat, ns). OSError, ValueError or IndexError
    when it cannot be read."""
    return sum(int(read_text(f"/proc/{pid}/task/{tid}/schedstat").split()[0]) for tid in os.listdir(f"/proc/{pid}/task"))


def process_cpu_ns(pid: int, tick_ns: float) -> int:
    """A process's CPU time so far: all its threads', those that ended included (its CPU clock, which any process may
    read: a chain of short-lived threads hid its work from the sum of the live ones' schedstat, red team, session 50),
    and what it reaped (its stat's cutime and cstime, in clock ticks of `tick_ns`). OSError, ValueError or IndexError
    when it cannot be read."""
    reaped = read_text(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[13:15]
    own = time.clock_gettime_ns((~pid << 3) | 2)  # the kernel's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    return own + int(sum(int(t) for t in reaped) * tick_ns)
