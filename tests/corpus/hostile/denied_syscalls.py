"""Asks the kernel for what grading never needs and a submission could turn against it: self-filling memory
(userfaultfd, as adversarial/uffd_lazy_output_gelu uses it), I/O that completes outside its call (io_uring), and the
kernel's key store (keyctl) and performance events (perf_event_open: kernel memory no cgroup is charged for). Each
must be refused with EPERM by the sandbox's seccomp filter; if any is granted the GELU it returns is wrong on purpose,
so a grader that lets one through grades this incorrect.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: allow_framework
"""
import ctypes
import errno
import platform

import torch
import torch.nn as nn

_NUMBERS = {"x86_64": {"userfaultfd": 323, "io_uring_setup": 425, "keyctl": 250, "perf_event_open": 298},
            "aarch64": {"userfaultfd": 282, "io_uring_setup": 425, "keyctl": 219, "perf_event_open": 241}}


def _granted() -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    nr = _NUMBERS[platform.machine()]
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    attr = ctypes.create_string_buffer(128)  # struct perf_event_attr: type 1 (software), size, config 0 (cpu clock)
    attr[0:4], attr[4:8] = (1).to_bytes(4, "little"), (128).to_bytes(4, "little")
    tries = {"userfaultfd": (nr["userfaultfd"], 0o2000000 | 0o4000 | 1),  # O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY
             "io_uring_setup": (nr["io_uring_setup"], 4, params),
             "keyctl": (nr["keyctl"], 0, -3, 1),  # KEYCTL_GET_KEYRING_ID of the session keyring, created if need be
             "perf_event_open": (nr["perf_event_open"], attr, 0, -1, -1, 0)}  # a software clock on itself
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
