"""The first process's account of its tree's CPU at each told stop and at the continue, with hoppers in the tree (the
test_tree_pause hopper test's sandbox, N rounds of 3 pauses of 0.3 s), and what it consisted of: the live threads'
schedstat, what live processes reaped (cutime/cstime, in clock ticks) and what the first process reaped (session 49).

  PYTHONPATH=. python benchmarks/probes/s49_hop_pause_account.py N
Prints per pause: the growth in ms (threads, reaped by the tree, reaped by the first process), and whether the first
process called it a run (over confine.STOPPED_CPU_MAX_NS).
"""
import mmap
import os
import resource
import struct
import sys
import time

from kb_data.harness import confine
from kb_data.harness.procfs import read_text
from kb_data.io import remove_tree
from tests.test_sandbox_user import _as_a_user, _hop_then_report, _scoped_user_base

log = mmap.mmap(-1, 1 << 16)  # shared with the first process, forked from here
slot = [0]


def parts() -> tuple:
    me, tick_ns, threads, reaped = os.getpid(), 1e9 / os.sysconf("SC_CLK_TCK"), 0, 0
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            os.kill(int(name), 0)
            pid = int(name)
            t = sum(int(read_text(f"/proc/{pid}/task/{tid}/schedstat").split()[0]) for tid in os.listdir(f"/proc/{pid}/task"))
            r = int(sum(int(x) for x in read_text(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[13:15]) * tick_ns)
            threads, reaped = threads + t, reaped + r
        except (OSError, ValueError, IndexError):
            continue
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return threads, reaped, int((used.ru_utime + used.ru_stime) * 1e9)


def recorded(pids=None) -> int:  # confine._tree_cpu_ns's signature since session 50 (its scan's pids)
    p = parts()
    n = struct.unpack_from("i", log, 0)[0]
    struct.pack_into("qqq", log, 8 + 24 * n, *p)
    struct.pack_into("i", log, 0, n + 1)
    return sum(p)


confine._tree_cpu_ns = recorded
uid, base = 61_049, _scoped_user_base(61_049)
hops = mmap.mmap(-1, 32)


def look(sb, got):
    for _ in range(3):
        sb.signal_tree(stop=True)
        time.sleep(0.3)
        sb.signal_tree(stop=False)
        time.sleep(0.05)
    return {"ran": sb.ran_stopped}


try:
    for _ in range(int(sys.argv[1])):
        struct.pack_into("i", log, 0, 0)
        got = _as_a_user(uid, base, _hop_then_report(hops), look)
        n = struct.unpack_from("i", log, 0)[0]
        rows = [struct.unpack_from("qqq", log, 8 + 24 * i) for i in range(n)]
        for a, b in zip(rows[::2], rows[1::2]):
            d = [(y - x) / 1e6 for x, y in zip(a, b)]
            print(f"growth {sum(d):8.3f} ms (threads {d[0]:.3f}, reaped by the tree {d[1]:.3f}, by the first process "
                  f"{d[2]:.3f}) {'RUN' if sum(d) * 1e6 > confine.STOPPED_CPU_MAX_NS else ''}", flush=True)
        print("ran_stopped", got, flush=True)
finally:
    remove_tree(base)
