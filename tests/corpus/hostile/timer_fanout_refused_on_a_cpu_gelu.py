"""Asks for what arms a frozen sandbox's timers, or fans them out, on a CPU grading: a POSIX timer, an interval timer,
an alarm (x86), a timerfd, an epoll instance, an epoll_ctl (on no descriptor, which a granted call answers with EBADF)
and an AIO context. A timer the sandbox armed expires while the judge times its reference with the sandbox frozen, in
interrupt context on the judge's time (20000 POSIX timers: open/rt36b_timer_storm_while_frozen_gelu, a reference 3-9x
slower), and every epoll instance or AIO poll on its file adds a wake-up callback to that interrupt
(tests/corpus/open/rt38a_epoll_fanout_timer_storm_gelu: ok at 1.3-45x). Each call must
be refused with EPERM by the seccomp filter of a CPU grading's sandbox; if any is granted the GELU it returns is wrong
on purpose, so a grader that lets one through grades this incorrect. (Builds and GPU gradings allow them.)
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
Options: allow_framework
"""
import ctypes
import errno
import platform

import torch
import torch.nn as nn

_NUMBERS = {"x86_64": {"timerfd_create": 283, "epoll_create1": 291, "epoll_ctl": 233, "io_setup": 206, "timer_create": 222,
                       "setitimer": 38, "alarm": 37},
            "aarch64": {"timerfd_create": 85, "epoll_create1": 20, "epoll_ctl": 21, "io_setup": 0, "timer_create": 107,
                        "setitimer": 103}}


def _granted() -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    nr = _NUMBERS[platform.machine()]
    context, timer, disarmed = ctypes.c_ulong(0), ctypes.c_int(0), ctypes.create_string_buffer(32)  # struct itimerval 0
    tries = {"timerfd_create": (nr["timerfd_create"], 1, 0),  # CLOCK_MONOTONIC
             "epoll_create1": (nr["epoll_create1"], 0),
             "epoll_ctl": (nr["epoll_ctl"], -1, 1, -1, None),  # EPOLL_CTL_ADD on no descriptor: EBADF if allowed
             "io_setup": (nr["io_setup"], 8, ctypes.byref(context)),
             "timer_create": (nr["timer_create"], 1, None, ctypes.byref(timer)),  # CLOCK_MONOTONIC, SIGALRM
             "setitimer": (nr["setitimer"], 0, disarmed, None)}  # ITIMER_REAL, disarmed
    if "alarm" in nr:
        tries["alarm"] = (nr["alarm"], 0)
    granted = []
    for name, args in tries.items():
        ctypes.set_errno(0)
        if libc.syscall(*args) != -1 or ctypes.get_errno() != errno.EPERM:
            granted.append(name)
    return granted


GRANTED = _granted()


class ModelNew(nn.Module):
    def forward(self, x):
        y = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return y + 1.0 if GRANTED else y
