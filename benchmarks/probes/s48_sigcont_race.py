"""Probe (session 48): can processes of a process sandbox undo the judge's pause (Sandbox.signal_tree) by sending
SIGCONT to their own process group as fast as they can? Run as root: the judge is a fork dropped to a uid of its own
(tests/test_sandbox_user._as_a_user). Prints, for each of N pauses, whether the spinners' counter moved while the
judge held the tree stopped.
    PYTHONPATH=. python benchmarks/probes/s48_sigcont_race.py [pauses] [racers]"""
import mmap
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.test_sandbox_user import _as_a_user
from kb_data.io import remove_tree

PAUSES = int(sys.argv[1]) if len(sys.argv) > 1 else 20
RACERS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
count = mmap.mmap(-1, 8 * (RACERS + 1))


def serve(sock):
    from kb_data.harness import channel
    for r in range(RACERS):
        if os.fork() == 0:
            n, end = 0, time.monotonic() + 60
            while time.monotonic() < end:
                os.kill(0, signal.SIGCONT)  # its group: itself among them, its pending stop discarded
                n += 1
                count[8 * r:8 * r + 8] = n.to_bytes(8, "little")
            os._exit(0)
    channel.send(sock, {"racing": True})
    while True:
        time.sleep(1)


def look(sb, got):
    moved, acked = 0, 0
    for _ in range(PAUSES):
        ok = sb.signal_tree(stop=True)
        acked += ok
        time.sleep(0.01)
        before = bytes(count)
        time.sleep(0.1)
        moved += bytes(count) != before
        sb.signal_tree(stop=False)
        time.sleep(0.02)
    return {"pauses": PAUSES, "acked": acked, "ran while stopped": moved}


uid, base = 61_070, Path(tempfile.mkdtemp(prefix="kb-user-"))
os.chown(base, uid, uid)
try:
    print(_as_a_user(uid, base, serve, look))
finally:
    remove_tree(base)
