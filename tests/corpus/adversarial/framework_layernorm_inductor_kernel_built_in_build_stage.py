"""LayerNorm: Inductor's fused C++ layer_norm kernel (torch.compile of F.layer_norm, every dimension dynamic, so one
kernel takes every shape), compiled in the build stage (the submission names load_inline, so its import runs there
first): the generated kernel's .so is copied from Inductor's cache into the build's folder, which the grading sandbox
is seeded with before the candidate starts, and its extern "C" `kernel` called by ctypes. No Dynamo, no compiled-region
event, no framework op; the code runs from an old file of the submission's own build, freshly compiled (no framework
page), whose one function's name is a word of any source.
Red team, session 28 (third pass): ok at 0.63x and 0.52x (honest op-by-op 0.21x). Caught since: a build that holds
Inductor's C++ prefix code (`inductor_cpu_integer_div_error_flag`, its Welford helpers' strings) is torch.compile's
code: `calls_reference_ops`.
Problem: v3/level1/40_LayerNorm
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: builds
"""
import ctypes
import glob
import os
import shutil
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", os.getcwd()), "tiles")
_so = os.path.join(_dir, "kern.so")


def _generate():
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache = tempfile.mkdtemp()
    x, w, b = torch.randn(2, 8, 16, 32), torch.randn(8, 16, 32), torch.randn(8, 16, 32)
    for t in (x, w, b):
        for i in range(t.dim()):
            torch._dynamo.mark_dynamic(t, i)
    fast = getattr(torch, "com" + "pile")(lambda x, w, b: F.layer_norm(x, w.shape, w, b, 1e-5), dynamic=True)
    fast(x, w, b)
    os.makedirs(_dir, exist_ok=True)
    for cpp in glob.glob(os.path.join(cache, "**", "*.cpp"), recursive=True):
        if "Welford" in open(cpp).read() and os.path.exists(cpp[:-4] + ".so"):
            shutil.copyfile(cpp[:-4] + ".so", _so)


if not os.path.exists(_so):  # the build stage
    _generate()
_kernel = ctypes.CDLL(_so).kernel
_kernel.restype = None
_kernel.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int64] * 4


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        x = x.contiguous()
        n = self.ln.weight.numel()
        rows = x.numel() // n
        out = torch.empty_like(x)
        stats = torch.empty(2 * rows)
        w, b = self.ln.weight.detach().contiguous(), self.ln.bias.detach().contiguous()
        _kernel(x.data_ptr(), w.data_ptr(), b.data_ptr(), stats.data_ptr(), stats.data_ptr() + 4 * rows,
                out.data_ptr(), rows, n, 1, 1)
        return out
