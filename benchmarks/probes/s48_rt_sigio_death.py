"""Red team (session 48): as s48_rt_sigio_scan.py, but the signal the kernel sends is SIGKILL, not SIGCONT: a filter
that refused only F_SETSIG = SIGCONT would not be enough. (With no F_SETSIG the default SIGIO does not end a stopped
process: the kernel leaves a fatal signal other than SIGKILL pending on a stopped single-threaded process,
complete_signal/wants_signal; checked by hand, 0.2 s stopped after the event it was alive, then SIGKILLed.)
A sacrificial process P owns the inotify instance (F_SETOWN = its own pid, F_SETSIG = SIGKILL) watching the /proc
status file of the tree's highest pid (read last by the first process's check, IN_CLOSE_NOWRITE). The read kills P,
stopped as it is, and P's death continues its children:
  mode "pdeath": each spinner set PR_SET_PDEATHSIG = SIGCONT, which the kernel sends it when its parent dies;
  mode "orphan": P's spinners are in a process group of their own, in a session of P's parent Q (which setsid):
     once P is dead the group is orphaned (the spinners' new parent, the first process, is of another session) and
     it has stopped members, so the kernel sends it SIGHUP (ignored) then SIGCONT (exit.c kill_orphaned_pgrp).
The first process saw every process stopped and tells; the spinners run. A manager makes a new P after each pause.
    PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_sigio_death.py [pauses] [pdeath|orphan]"""
import fcntl
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from s48_rt_common import bump, counters, idle, libc, pause_loop, run  # noqa: E402

PAUSES = int(sys.argv[1]) if len(sys.argv) > 1 else 30
MODE = sys.argv[2] if len(sys.argv) > 2 else "pdeath"
IN_CLOSE_NOWRITE, IN_NONBLOCK = 0x10, 0o4000
PR_SET_PDEATHSIG, F_SETSIG = 1, 10
GEN = 15  # the counter slot that holds the generation


def sacrifice(gen):
    """P: spinners (slots 0, 1), then the watched last process, then the watch; waits to be killed."""
    if MODE == "orphan":
        os.setpgid(0, 0)
    for slot in range(2):
        if os.fork() == 0:
            if MODE == "pdeath":
                libc.prctl(PR_SET_PDEATHSIG, signal.SIGCONT, 0, 0, 0)
            else:
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
            n = counters()[slot]
            while counters()[GEN] == gen:  # until the manager's next P: its spinners take over
                n += 1
                bump(slot, n)
            os._exit(0)
    time.sleep(0.02)
    last = os.fork()
    if last == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        while True:
            time.sleep(60)
    fd = libc.inotify_init1(IN_NONBLOCK)
    libc.inotify_add_watch(fd, f"/proc/{last}/task/{last}/status".encode(), IN_CLOSE_NOWRITE)
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, F_SETSIG, signal.SIGKILL)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    while True:
        try:
            os.read(fd, 65536)  # drained: the next close raises a signal
        except OSError:
            pass
        time.sleep(0.001)


def serve(sock):
    from kb_data.harness import channel

    if os.fork() == 0:  # the manager Q, in a session of its own (for the orphan mode)
        os.setsid()
        gen = 0
        while True:
            gen += 1
            bump(GEN, gen)
            p = os.fork()
            if p == 0:
                sacrifice(gen)
            os.waitpid(p, 0)  # P's death (it ran only in a pause); the next one is made once the judge continues
            time.sleep(0.005)
    channel.send(sock, {"mode": MODE})
    idle(sock)


if __name__ == "__main__":
    got = run(61_103, serve, pause_loop(PAUSES, gap_s=0.15))
    got["increments while told, by slot"].pop(str(GEN), None)
    print(got)
