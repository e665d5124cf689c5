"""Probe (session 48): how long a process sandbox's first process takes to tell the judge its tree is stopped, with
four processes hopping from pid to pid in it (tests/test_sandbox_user._hop_then_report), as a user's judge (run as
root: the judge is a fork dropped to a uid of its own). Prints (told, ms) for each of ten pauses.
    PYTHONPATH=. python benchmarks/probes/s48_tree_stop_times.py"""
import mmap
import time

from kb_data.io import remove_tree
from tests.test_sandbox_user import _as_a_user, _hop_then_report, _scoped_user_base

hops = mmap.mmap(-1, 32)


def look(sb, got):
    out = []
    for _ in range(10):
        start = time.monotonic()
        told = sb.signal_tree(stop=True)
        out.append((told, round((time.monotonic() - start) * 1000, 1)))
        time.sleep(0.05)
        sb.signal_tree(stop=False)
        time.sleep(0.05)
    return out


base = _scoped_user_base(61_060)
try:
    print(_as_a_user(61_060, base, _hop_then_report(hops), look))
finally:
    remove_tree(base)
