"""L2 lines made persistent across the flush (session 41, #22): does a kernel whose weights are marked persisting
(cudaLimitPersistingL2CacheSize + a stream access-policy window) keep them in L2 through the harness's 256 MiB flush,
what does that gain, does resetting persisting lines before each flush (cudaCtxResetPersistingL2Cache) undo it, what
does the reset cost (does it wait for the GPU), and does another process's context see the set-aside limit?

  python benchmarks/probes/s41_l2_persist.py            (one GPU; prints one line per figure)
"""
import ctypes
import glob
import os
import subprocess
import sys
import time

import torch

LIMIT_PERSISTING_L2 = 0x06
ATTR_ACCESS_POLICY_WINDOW = 1
PERSISTING, STREAMING, NORMAL = 2, 1, 0
DEV_ATTR_L2, DEV_ATTR_MAX_PERSISTING, DEV_ATTR_MAX_WINDOW = 38, 108, 109


def cudart():
    """The CUDA runtime torch loaded (found in this process's mappings), else the one beside torch or the toolkit's."""
    torch.empty(1, device="cuda")
    with open("/proc/self/maps") as f:
        loaded = sorted({line.split()[-1] for line in f if "libcudart" in line})
    found = loaded + glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "cu*", "lib", "libcudart.so*")) \
        + glob.glob("/usr/local/cuda*/lib64/libcudart.so*")
    print("cudart", found[:1], "torch cuda", torch.version.cuda, flush=True)
    return ctypes.CDLL(found[0])


class Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class AttrValue(ctypes.Union):
    _fields_ = [("accessPolicyWindow", Window), ("pad", ctypes.c_char * 64)]


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: cuda error {rc}")


def limit(rt) -> int:
    v = ctypes.c_size_t()
    check(rt.cudaDeviceGetLimit(ctypes.byref(v), LIMIT_PERSISTING_L2), "cudaDeviceGetLimit")
    return v.value


if len(sys.argv) > 1 and sys.argv[1] == "peek":  # another process: the limit as its own context sees it
    torch.cuda.init()
    torch.empty(1, device="cuda")
    print("peek limit", limit(cudart()), flush=True)
    sys.exit(0)

torch.cuda.init()
rt = cudart()
dev = torch.cuda.current_device()
l2, maxp = ctypes.c_int(), ctypes.c_int()
check(rt.cudaDeviceGetAttribute(ctypes.byref(l2), DEV_ATTR_L2, dev), "attr")
check(rt.cudaDeviceGetAttribute(ctypes.byref(maxp), DEV_ATTR_MAX_PERSISTING, dev), "attr")
maxwin = ctypes.c_int()
check(rt.cudaDeviceGetAttribute(ctypes.byref(maxwin), DEV_ATTR_MAX_WINDOW, dev), "attr")
print("max access policy window", maxwin.value, flush=True)
print(torch.cuda.get_device_name(), "L2", l2.value, "max persisting", maxp.value, "limit now", limit(rt), flush=True)

flush_buf = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
s = torch.cuda.Stream()
results = {}
for mb in (8, 16, 24, 32):
    n = int(mb * 2**20 / 4 / 4096)
    W = torch.randn(n, 4096, device="cuda")
    x = torch.randn(4096, device="cuda")

    def window(base, nbytes, prop):
        v = AttrValue()
        v.accessPolicyWindow = Window(base, nbytes, 1.0 if nbytes else 0.0, prop, STREAMING if prop == PERSISTING else NORMAL)
        check(rt.cudaStreamSetAttribute(ctypes.c_void_p(s.cuda_stream), ATTR_ACCESS_POLICY_WINDOW, ctypes.byref(v)), "window")

    def run(persist: bool, reset: bool, calls: int = 200, held: bool = False, evict: bool = False):
        if persist:
            check(rt.cudaDeviceSetLimit(LIMIT_PERSISTING_L2, maxp.value), "setlimit")
            v = AttrValue()
            v.accessPolicyWindow = Window(W.data_ptr(), min(W.numel() * 4, maxp.value), 1.0, PERSISTING, STREAMING)
            check(rt.cudaStreamSetAttribute(ctypes.c_void_p(s.cuda_stream), ATTR_ACCESS_POLICY_WINDOW, ctypes.byref(v)), "window")
        else:
            v = AttrValue()
            v.accessPolicyWindow = Window(None, 0, 0.0, NORMAL, NORMAL)
            check(rt.cudaStreamSetAttribute(ctypes.c_void_p(s.cuda_stream), ATTR_ACCESS_POLICY_WINDOW, ctypes.byref(v)), "window")
            check(rt.cudaCtxResetPersistingL2Cache(), "reset")
            check(rt.cudaDeviceSetLimit(LIMIT_PERSISTING_L2, 0), "setlimit0")
        times, reset_host = [], []
        torch.cuda.synchronize()
        with torch.cuda.stream(s):
            if held:  # the whole loop queued behind 200 ms of GPU work, as the gated batch is: every host call made before the GPU runs it
                torch.cuda._sleep(int(200 * 1.98e6))
            for i in range(calls):
                if reset:
                    t = time.perf_counter()
                    check(rt.cudaCtxResetPersistingL2Cache(), "reset")
                    reset_host.append((time.perf_counter() - t) * 1e6)
                if evict:  # the flush's own lines persisting: they take the set-aside from whatever persisted before
                    window(flush_buf.data_ptr(), min(flush_buf.numel() * 4, maxwin.value), PERSISTING)
                flush_buf.zero_()
                if evict:
                    window(W.data_ptr(), min(W.numel() * 4, maxp.value), PERSISTING) if persist else window(None, 0, NORMAL)
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                torch.mv(W, x)
                b.record()
                times.append((a, b))
            torch.cuda.synchronize()
        ms = sorted(a.elapsed_time(b) for a, b in times[20:])
        return ms[len(ms) // 2], (sorted(reset_host)[len(reset_host) // 2] if reset_host else None)

    for held in (False, True):
        plain = run(False, False, held=held)
        plain_reset = run(False, True, held=held)
        pers = run(True, False, held=held)
        pers_reset = run(True, True, held=held)
        plain_evict = run(False, False, held=held, evict=True)
        pers_evict = run(True, False, held=held, evict=True)
        plain2 = run(False, False, held=held)
        print(f"W {mb} MB{' queued behind a spin' if held else ''}: plain {plain[0]:.4f} ms, plain + reset {plain_reset[0]:.4f}, "
              f"persisting {pers[0]:.4f} ms ({plain[0] / pers[0]:.2f}x), persisting + reset before each flush "
              f"{pers_reset[0]:.4f} ms (reset {pers_reset[1]:.1f} us host), plain with a persisting flush {plain_evict[0]:.4f}, "
              f"persisting with a persisting flush {pers_evict[0]:.4f}, plain again {plain2[0]:.4f}", flush=True)

# what the persisting flush costs a large honest kernel (its L2 reuse within a call): a 4096^3 GEMM, fp16 and fp32
for dtype in (torch.float16, torch.float32):
    A, B = torch.randn(4096, 4096, device="cuda", dtype=dtype), torch.randn(4096, 4096, device="cuda", dtype=dtype)
    W, x = A, B[:, 0]  # window() restores a window over W where persist is set: not here

    def gemm(evict: bool, calls: int = 60):
        window(None, 0, NORMAL)
        times = []
        with torch.cuda.stream(s):
            for i in range(calls):
                if evict:
                    window(flush_buf.data_ptr(), min(flush_buf.numel() * 4, maxwin.value), PERSISTING)
                flush_buf.zero_()
                if evict:
                    window(None, 0, NORMAL)
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                A @ B
                b.record()
                times.append((a, b))
            torch.cuda.synchronize()
        ms = sorted(a.elapsed_time(b) for a, b in times[10:])
        return ms[len(ms) // 2]

    g = [gemm(False), gemm(True), gemm(False), gemm(True)]
    print(f"GEMM 4096 {dtype}: plain {g[0]:.4f} / {g[2]:.4f} ms, with a persisting flush {g[1]:.4f} / {g[3]:.4f} ms", flush=True)

# does the reset wait for queued GPU work? queue 50 ms of work, then time the reset on the host
big = torch.randn(8192, 8192, device="cuda")
torch.cuda.synchronize()
with torch.cuda.stream(s):
    for _ in range(20):
        big @ big
    t = time.perf_counter()
    check(rt.cudaCtxResetPersistingL2Cache(), "reset")
    reset_ms = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    torch.cuda.synchronize()
    rest_ms = (time.perf_counter() - t) * 1e3
print(f"reset behind queued work: {reset_ms:.3f} ms on the host, then {rest_ms:.1f} ms until the GPU was done", flush=True)
check(rt.cudaDeviceSetLimit(LIMIT_PERSISTING_L2, maxp.value), "setlimit")
print("this process's limit", limit(rt), flush=True)
print(subprocess.run([sys.executable, __file__, "peek"], capture_output=True, text=True).stdout.strip(), flush=True)
