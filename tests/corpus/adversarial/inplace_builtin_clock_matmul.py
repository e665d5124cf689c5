"""tests/corpus/open/rt18_inplace_builtin_clock_gelu's clock (the existing `time.perf_counter` object's method
table pointed through ctypes at a clock running at 1/8 speed, so the candidate's tamper report stays empty) on a call
of about 2 ms:
the honest level-2 fusion of honest/torch_fused_matmul_scale_residual. Every claim is an eighth of the truth, inside
the round trip's 10 ms margin; the forward thread's CPU clock (session 32) stands 2 ms a call over a 0.25 ms claim.
Problem: v3/level2/40_Matmul_Scaling_ResidualAdd
Verdict: floored
Device: cpu
"""
import ctypes
import time

import torch
import torch.nn as nn

_SLOW = 8.0
_ns = time.perf_counter_ns


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


@ctypes.CFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p)
def _slow_perf_counter(_self, _unused):
    return _ns() / 1e9 / _SLOW


_DEF = _MethodDef(b"perf_counter", ctypes.cast(_slow_perf_counter, ctypes.c_void_p), 0x0004, None)  # METH_NOARGS
_M_ML_OFFSET = 16  # after ob_refcnt and ob_type
ctypes.c_void_p.from_address(id(time.perf_counter) + _M_ML_OFFSET).value = ctypes.addressof(_DEF)


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        y = (x[:, None, :] * w[None, :, :]).sum(dim=2) + b
        return y * (1.0 + self.scaling_factor)
