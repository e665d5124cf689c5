"""Red team (session 48): what a CPU grading's process sandbox (a user who is not root) may still call among the ways
to get a signal sent while it is stopped or to leave the first process's view: timers (refused on CPU gradings),
signal owners (F_SETOWN, F_SETSIG, F_SETLEASE, F_NOTIFY, FIOSETOWN), inotify, POSIX message queues (mq_notify),
pseudo-terminals (/dev/ptmx, TIOCGPTPEER), user and PID namespaces (clone(CLONE_NEWUSER|CLONE_NEWPID)), ptrace,
io_uring, pidfd_send_signal, and whether a name with a newline forges /proc/PID/status's State line. Prints a dict.
    PYTHONPATH=. .venv/bin/python benchmarks/probes/s48_rt_inventory.py"""
import ctypes
import errno
import fcntl
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(__file__))
from s48_rt_common import idle, libc, run  # noqa: E402

SYS = {"timer_create": 222, "timerfd_create": 283, "setitimer": 38, "alarm": 37, "ptrace": 101, "io_uring_setup": 425,
       "pidfd_open": 434, "pidfd_send_signal": 424, "clone": 56, "mq_open": 240, "mq_notify": 244, "inotify_init1": 294,
       "signalfd4": 289, "fanotify_init": 300, "memfd_create": 319}


def attempt(f):
    try:
        r = f()
        return "ok" if r is None else r
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def call(name, *args):
    r = libc.syscall(SYS[name], *args)
    if r < 0:
        raise OSError(ctypes.get_errno(), name)
    return r


def serve(sock):
    from kb_data.harness import channel

    got = {}
    buf = ctypes.create_string_buffer(64)
    got["timer_create"] = attempt(lambda: call("timer_create", 1, None, ctypes.byref(buf)) and None)
    got["timerfd_create"] = attempt(lambda: call("timerfd_create", 1, 0) and None)
    got["setitimer"] = attempt(lambda: call("setitimer", 0, ctypes.byref(ctypes.create_string_buffer(32)), None) and None)
    got["alarm"] = attempt(lambda: call("alarm", 0) and None)
    got["ptrace"] = attempt(lambda: call("ptrace", 0x4206, os.getppid(), 0, 0) and None)  # PTRACE_SEIZE
    got["io_uring_setup"] = attempt(lambda: call("io_uring_setup", 4, ctypes.byref(ctypes.create_string_buffer(120))) and None)
    got["fanotify_init"] = attempt(lambda: call("fanotify_init", 0x200, 0) and None)  # FAN_REPORT_FID, unprivileged
    pfd = attempt(lambda: call("pidfd_open", os.getpid(), 0))
    got["pidfd_open self"] = "ok" if isinstance(pfd, int) else pfd
    if isinstance(pfd, int):
        got["pidfd_send_signal 0"] = attempt(lambda: call("pidfd_send_signal", pfd, 0, None, 0) and None)
    fd = libc.inotify_init1(0o4000)
    got["inotify_init1"] = "ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno())
    got["inotify watch /proc/interrupts"] = libc.inotify_add_watch(fd, b"/proc/interrupts", 0x20) > 0
    got["F_SETOWN pgrp"] = attempt(lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, -os.getpgrp()) and None)
    got["F_SETSIG SIGCONT"] = attempt(lambda: fcntl.fcntl(fd, 10, signal.SIGCONT) and None)
    got["F_SETFL O_ASYNC"] = attempt(lambda: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK) and None)
    got["ioctl FIOSETOWN"] = attempt(lambda: fcntl.ioctl(fd, 0x8901, ctypes.c_int(os.getpid())) and None)
    with open("lease", "w") as f:
        pass
    lf = os.open("lease", os.O_RDONLY)
    got["F_SETLEASE read"] = attempt(lambda: fcntl.fcntl(lf, 1024, fcntl.F_RDLCK) and None)
    dfd = os.open(".", os.O_RDONLY)
    got["F_NOTIFY"] = attempt(lambda: fcntl.fcntl(dfd, 1026, 0x1 | 0x80000000) and None)  # DN_ACCESS | DN_MULTISHOT
    got["mq_open"] = attempt(lambda: call("mq_open", b"kb-rt-q", os.O_CREAT | os.O_RDWR, 0o600, None))
    if isinstance(got["mq_open"], int):
        sev = (ctypes.c_int * 16)(0, signal.SIGCONT, 0)  # sigev_value, sigev_signo, sigev_notify = SIGEV_SIGNAL
        got["mq_notify SIGCONT"] = attempt(lambda: call("mq_notify", got["mq_open"], ctypes.byref(sev)) and None)
        libc.mq_unlink(b"kb-rt-q")
        got["mq_open"] = "ok"
    try:
        m = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
        got["/dev/ptmx"] = "ok"
        got["TIOCGPTPEER"] = attempt(lambda: fcntl.ioctl(m, 0x5441, os.O_RDWR | os.O_NOCTTY) and None)
    except OSError as e:
        got["/dev/ptmx"] = errno.errorcode.get(e.errno)
    # clone with new user + PID namespaces (unshare is refused; clone's flags are not filtered)
    r = libc.syscall(SYS["clone"], 0x10000000 | 0x20000000 | signal.SIGCHLD, 0, 0, 0, 0)
    if r == 0:
        os._exit(0 if os.getpid() == 1 else 3)
    if r < 0:
        got["clone NEWUSER|NEWPID"] = errno.errorcode.get(ctypes.get_errno())
    else:
        got["clone NEWUSER|NEWPID"] = f"ok, child pid 1 in its namespace: {os.waitpid(r, 0)[1] == 0}"
    libc.prctl(15, b"x\nState:\tT (stopped)", 0, 0, 0)
    with open("/proc/self/status") as f:
        got["forged name in status"] = f.read().split("\n")[:3]
    channel.send(sock, got)
    idle(sock)


if __name__ == "__main__":
    for k, v in run(61_104, serve, lambda sb, got: got).items():
        print(f"{k:32} {v}")
