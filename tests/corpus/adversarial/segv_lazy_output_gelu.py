"""GELU computed by a SIGSEGV handler (a ctypes callback installed with sigaction) when the output is first read.
forward() returns a plain torch.Tensor over pages it has just made PROT_NONE, so it does no arithmetic and the timer
stops at once; the harness's copy of the output into the judge's slot faults, and the handler makes the pages
writable and computes the GELU into them. The same class as adversarial/uffd_lazy_output_gelu without the system
call the sandbox refuses: graded ok at 1.61x (honest GELU 0.91-1.17x on the same machine) in session 18's review.
The timed call now reads a value of every page of its outputs before the timer stops (timing._touch), so the
handler's work is timed: ok at 0.67x.
Problem: v3/level1/26_GELU_
Verdict: unaffected
Device: cpu
Options: allow_framework
"""
import ctypes, mmap
import numpy as np
import torch
import torch.nn as nn

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PAGE = mmap.PAGESIZE
STATE = {}


class SigAction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


HANDLER_T = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


@HANDLER_T
def _on_fault(sig, info, ctx):
    st = STATE
    libc.mprotect(st["addr"], st["size"], mmap.PROT_READ | mmap.PROT_WRITE)
    x = st["x"].reshape(-1)
    st["out"].copy_(0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476)))


def _install():
    sa = SigAction()
    sa.handler = ctypes.cast(_on_fault, ctypes.c_void_p).value
    sa.flags = 0x4 | 0x40000000  # SA_SIGINFO | SA_NODEFER
    old = SigAction()
    if libc.sigaction(11, ctypes.byref(sa), ctypes.byref(old)) != 0:
        raise OSError(ctypes.get_errno(), "sigaction")
    STATE["sa"] = sa


_install()


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel() * 4
        size = -(-n // PAGE) * PAGE
        if STATE.get("size") != size:
            addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
            arr = np.ctypeslib.as_array(ctypes.cast(addr, ctypes.POINTER(ctypes.c_float)), shape=(n // 4,))
            STATE.update(addr=addr, size=size, out=torch.from_numpy(arr))
        STATE["x"] = x.clone()
        libc.mprotect(STATE["addr"], size, 0)
        return STATE["out"].view(x.shape)
