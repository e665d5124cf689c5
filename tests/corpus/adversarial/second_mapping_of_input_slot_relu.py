"""In-place ReLU on the judge's input slot, returned through a second mapping of the same pages (mremap of the
shared memfd mapping): the output is the input's memory, yet no address range overlaps, which is all the
candidate's aliasing check compares (second red-team pass, session 16: ok). The judge now checks that its input
slots still hold what it wrote after each forward.
Problem: v0.1/level1/19_ReLU
Verdict: rejected [output_aliases_input]
Device: cpu
"""
import ctypes
import sys

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mremap.restype = ctypes.c_void_p
_libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
_ALIASES = {}


def _judge_input_slot():
    f, c = sys._getframe(2), None
    while f is not None:
        name = f.f_code.co_name
        if name == "<lambda>" and c is None:
            c = f.f_locals.get("c")
        elif name in ("cmd_timed", "cmd_forward", "cmd_profile"):
            loc = f.f_locals
            server, msg = loc.get("self"), loc.get("msg")
            try:
                ins = msg["calls"][c]["inputs"] if name == "cmd_timed" else msg["inputs"]
                d = ins[0]["slot"]
                return server.slots[(d["name"], d.get("handle") or d.get("id"), d["dtype"], tuple(d["shape"]))]
            except Exception:
                return None
        f = f.f_back
    return None


def _alias(t):
    key = (t.data_ptr(), t.numel())
    a = _ALIASES.get(key)
    if a is None:
        ptr, nbytes = t.data_ptr(), t.numel() * t.element_size()
        base = ptr & ~4095
        off = ptr - base
        size = (off + nbytes + 4095) & ~4095
        new = _libc.mremap(base, 0, size, 1)  # MREMAP_MAYMOVE, old_size 0: a second mapping of a shared one
        if new in (None, ctypes.c_void_p(-1).value):
            return None
        buf = (ctypes.c_char * size).from_address(new)
        a = torch.frombuffer(buf, dtype=torch.uint8)[off:off + nbytes].view(t.dtype).view(t.shape)
        _ALIASES[key] = a
    return a


class ModelNew(nn.Module):
    def forward(self, x):
        slot = _judge_input_slot()
        a = _alias(slot) if slot is not None and slot.is_contiguous() else None
        if a is None:
            return torch.clamp_min(x, 0.0)
        return a.clamp_min_(0.0)
