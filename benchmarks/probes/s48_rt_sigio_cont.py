"""Red team (session 48): the kernel sends SIGCONT for the sandbox. An inotify instance of the sandbox watches a file
the judge reads inside a pause (/proc/interrupts: round_trip.host_interrupts, read right after the stop in
timed.time_paired's reference side), set O_ASYNC with F_SETOWN = its own process group and F_SETSIG = SIGCONT: every
event the judge's read raises makes the kernel send SIGCONT to the group (send_sigio, on the judge's own read, with
no sandbox process running), after the first process has told the judge the tree is stopped. Spinners count.
    PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_sigio_cont.py [pauses] [watched file] [control]
`control` (any 3rd arg): the judge does not read the file in its pauses (the same tree must then stay stopped)."""
import fcntl
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(__file__))
from kb_data.harness.round_trip import host_interrupts  # noqa: E402 (before the drop: a user may not read the stdlib)
from s48_rt_common import idle, libc, pause_loop, run, spin  # noqa: E402

PAUSES = int(sys.argv[1]) if len(sys.argv) > 1 else 30
WATCHED = sys.argv[2] if len(sys.argv) > 2 else "/proc/interrupts"
CONTROL = len(sys.argv) > 3
IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE, IN_NONBLOCK = 0x1, 0x20, 0x10, 0o4000
F_SETSIG = 10


def serve(sock):
    from kb_data.harness import channel

    fd = libc.inotify_init1(IN_NONBLOCK)
    wd = libc.inotify_add_watch(fd, WATCHED.encode(), IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE)
    setown = fcntl.fcntl(fd, fcntl.F_SETOWN, -os.getpgrp())
    setsig = fcntl.fcntl(fd, F_SETSIG, signal.SIGCONT)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)

    def drain():
        try:
            os.read(fd, 65536)
        except OSError:
            pass
    for slot in range(2):
        if os.fork() == 0:
            spin(slot, extra=drain)
    channel.send(sock, {"inotify fd": fd, "wd": wd, "setown": setown, "setsig": setsig, "pgrp": os.getpgrp()})
    idle(sock)


def during(sb):
    if not CONTROL:
        if WATCHED == "/proc/interrupts":
            host_interrupts()  # what timed.time_paired reads right after the stop, before timing its reference
        else:
            with open(WATCHED, "rb") as f:
                f.read()


if __name__ == "__main__":
    print(run(61_101, serve, pause_loop(PAUSES, during)))
