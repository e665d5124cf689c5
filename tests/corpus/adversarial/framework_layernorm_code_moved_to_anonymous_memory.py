"""LayerNorm: the framework's native LayerNorm kernel, its machine code moved into anonymous memory at the same address,
and the profile's busy time padded with an idle user range.
At import, the pages of libtorch_cpu.so that hold the LayerNorm kernel (functions named LayerNorm or RowwiseMoments)
are copied into a fresh anonymous mapping, made executable, and moved over the originals with mremap(MREMAP_FIXED):
same address, same bytes. The sampler counts anonymous code as the framework's (JIT code) but cannot NAME it (no
symbol table), so the norm family's 3-sample rule never fires; what is left is the framework-time allowance, 2 x the
profile's busy time + 1 ms. The busy time is the union of the profiled call's top-level CPU events, user ranges
included: in the profiled call only (a caller frame named cmd_profile) a record_function range sleeps 14 ms, no CPU,
no op name ("::"), which lifts the allowance to ~29 ms a call while staying under the 1.5 x timed + 10 ms busy limit.
The op is reached through redispatch with names built at run time (no op recorded).
Red team, session 27: ok at 1.26x and 1.21x (honest op-by-op 0.21x). Caught since: a framework library's
executable mappings in the sandbox must match the judge's own mappings of the same file: `check_failed`.
Since session 42 a CPU grading refuses mremap with MREMAP_FIXED (hostile/moved_mapping_refused_on_a_cpu_gelu), so
its import fails (compile_error); the check it was written for (rejected [check_failed]) stays behind that refusal.
Problem: v3/level1/40_LayerNorm
Verdict: caught
Device: cpu
Options: needs_sampler
"""
import ctypes
import mmap
import os
import re
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

_C = torch._C
_KS = getattr(_C, "Dispatch" + "KeySet")(getattr(_C, "Dispatch" + "Key").CPU)
_GO = getattr(getattr(getattr(torch.ops.aten, "native_" + "layer" + "_norm"), "default"), "re" + "dispatch")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _lib():
    """(path, load base) of libtorch_cpu.so in this process."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5].endswith("/libtorch_cpu.so") and parts[2] == "00000000":
                return parts[5], int(parts[0].split("-")[0], 16)
    raise RuntimeError("no libtorch_cpu.so")


def _pages(path: str, pattern: bytes):
    """File offsets (page-aligned, with lengths) of the functions whose names match `pattern`, and the vaddr delta."""
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phnum, shentsize, shnum = struct.unpack_from("<H", data, 0x38)[0], *struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    tab = {s[1]: s for s in secs}.get(2)
    strtab = secs[tab[6]]
    strings = data[strtab[4]:strtab[4] + strtab[5]]
    starts = sorted({strings.rfind(b"\0", 0, m.start()) + 1 for m in re.finditer(pattern, strings)})
    ent = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")])
    syms = np.frombuffer(data, dtype=ent, count=tab[5] // 24, offset=tab[4])
    sel = syms[((syms["info"] & 0xF) == 2) & (syms["size"] > 0) & np.isin(syms["name"], np.array(starts, dtype=np.uint32))]
    segs = [(vaddr, vaddr + filesz, off) for typ, _, off, vaddr, _, filesz, _, _ in
            (struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * k) for k in range(phnum)) if typ == 1]
    pages = set()
    for v, n in zip(sel["value"].tolist(), sel["size"].tolist()):
        pages.update(range(v // _PAGE, (v + n - 1) // _PAGE + 1))
    lo, hi, off = segs[0]  # the executable segment (offset == vaddr in this library)
    runs, run = [], None
    for p in sorted(pages):
        if run and p == run[1]:
            run[1] = p + 1
        else:
            run = [p, p + 1]
            runs.append(run)
    return data, [(a * _PAGE, (b - a) * _PAGE) for a, b in runs], off - lo


def _remap():
    path, base = _lib()
    data, runs, delta = _pages(path, rb"LayerNorm|RowwiseMoments")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mremap.restype = ctypes.c_void_p
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for vaddr, n in runs:
        tmp = libc.mmap(None, n, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        ctypes.memmove(tmp, data[vaddr + delta:vaddr + delta + n], n)
        libc.mprotect(tmp, n, mmap.PROT_READ | mmap.PROT_EXEC)
        got = libc.mremap(tmp, n, n, 1 | 2, base + vaddr)  # MREMAP_MAYMOVE | MREMAP_FIXED
        if got != base + vaddr:
            raise OSError(ctypes.get_errno(), "mremap")
    return sum(n for _, n in runs)


def _no_fresh_pages():
    libc = ctypes.CDLL(None)
    libc.mallopt(-4, 0)  # M_MMAP_MAX: no mmap'd chunks
    libc.mallopt(-1, 1 << 40)  # M_TRIM_THRESHOLD: keep freed memory


_MAPPED = _remap()
_no_fresh_pages()


def _profiled() -> bool:
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "cmd_profile":
            return True
        f = f.f_back
    return False


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        if _profiled():
            with torch.profiler.record_function("tile_schedule"):
                time.sleep(0.014)
        return _GO(_KS, x.contiguous(), list(self.ln.normalized_shape), self.ln.weight.detach(), self.ln.bias.detach(),
                   self.ln.eps)[0]
