"""Reading a process's or thread's figures from /proc, cheaply enough for the judge's timed loops."""
from __future__ import annotations


def status_field(status: str, name: str) -> str:
    """One field of /proc/PID/status ("PPid", "Uid"), without parsing the other fifty (scanned in timed loops)."""
    at = status.index(f"\n{name}:\t") + len(name) + 3
    return status[at:status.index("\n", at)]


def schedstat_ms(path: str) -> float:
    """A thread's CPU time so far, in ms, from its /proc/PID/task/TID/schedstat (ns). OSError, ValueError or
    IndexError when it cannot be read."""
    with open(path) as f:
        return int(f.read().split()[0]) / 1e6


def inner_id(status_path: str) -> int | None:
    """The id of a process or thread (its /proc status file) in its innermost PID namespace; None if it is gone."""
    try:
        with open(status_path) as f:
            return int(status_field(f.read(), "NSpid").split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def parent_and_inner_pid(pid: int) -> tuple[int, int] | None:
    """(parent pid, pid in its innermost PID namespace) of a process, from its status; None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            st = f.read()
        return int(status_field(st, "PPid")), int(status_field(st, "NSpid").split()[-1])
    except (OSError, ValueError, IndexError):
        return None
