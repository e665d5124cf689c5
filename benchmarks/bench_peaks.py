"""Measure the two ceilings of the local GPU (copy bandwidth, dense GEMM rate) for the roofline table.

    python benchmarks/bench_peaks.py
"""
import json
import sys

import torch


def bench(fn, iters=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main():
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    n = 1 << 30  # 4 GiB of fp32 per buffer
    a = torch.randn(n // 4, device="cuda")
    b = torch.empty_like(a)
    ms = bench(lambda: b.copy_(a))
    out["copy_tb_s"] = 2 * a.numel() * 4 / (ms * 1e-3) / 1e12
    del a, b
    for dtype, name in ((torch.bfloat16, "bf16"), (torch.float32, "fp32")):
        torch.backends.cuda.matmul.allow_tf32 = False
        x = torch.randn(8192, 8192, device="cuda", dtype=dtype)
        y = torch.randn(8192, 8192, device="cuda", dtype=dtype)
        ms = bench(lambda: x @ y, iters=10)
        out[f"gemm_{name}_tflops"] = 2 * 8192 ** 3 / (ms * 1e-3) / 1e12
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
