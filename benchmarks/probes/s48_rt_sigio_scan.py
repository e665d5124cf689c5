"""Red team (session 48): the first process's own check sends the SIGCONT. As s48_rt_sigio_cont.py (inotify, O_ASYNC,
F_SETOWN = the sandbox's process group, F_SETSIG = SIGCONT), but the watched files are the /proc files the first
process itself reads in _tree_stopped (procfs.stopped: /proc/PID/task/ and /proc/PID/task/TID/status) of the
sandbox's last process (the highest pid: /proc lists in pid order, so it is checked last). Closing it raises
IN_CLOSE_NOWRITE, after its state was read: the kernel sends SIGCONT to the group at the end of the scan, after
every process was seen stopped, and the first process tells. (Watching IN_OPEN too, the SIGCONT came before the last
read: 30 of 30 pauses went untold, each counted.) The judge does nothing
in its pauses here.
    PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_sigio_scan.py [pauses] [control]"""
import fcntl
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from s48_rt_common import idle, libc, pause_loop, run, spin  # noqa: E402

PAUSES = int(sys.argv[1]) if len(sys.argv) > 1 else 30
CONTROL = len(sys.argv) > 2  # any 2nd arg: the same tree, no signal owner set (nothing must run while told)
IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE, IN_NONBLOCK = 0x1, 0x20, 0x10, 0o4000
F_SETSIG = 10


def serve(sock):
    from kb_data.harness import channel

    for slot in range(2):
        if os.fork() == 0:
            spin(slot)
    fd = libc.inotify_init1(IN_NONBLOCK)
    if os.fork() == 0:  # a drainer: the queue must not fill (events then merge or overflow, raising no signal)
        spin(2, extra=lambda: _drain(fd))
    time.sleep(0.05)
    r, w = os.pipe()
    last = os.fork()  # the highest pid of the tree: a watcher that sleeps, whose /proc files the check reads last
    if last == 0:
        os.read(r, 1)
        idle(None)
    wds = [libc.inotify_add_watch(fd, f"/proc/{last}/task/{last}/status".encode(), IN_CLOSE_NOWRITE)]
    if not CONTROL:
        fcntl.fcntl(fd, fcntl.F_SETOWN, -os.getpgrp())
        fcntl.fcntl(fd, F_SETSIG, signal.SIGCONT)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    channel.send(sock, {"watches": wds, "last": last})
    idle(sock)


def _drain(fd):
    try:
        os.read(fd, 65536)
    except OSError:
        pass
    time.sleep(0.0005)


if __name__ == "__main__":
    print(run(61_102, serve, pause_loop(PAUSES)))
