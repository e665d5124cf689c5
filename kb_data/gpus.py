"""GPU keys and the peak rates used for roofline checks.

Keys are the canonical names used in every dataset (`gpu` columns). Peaks are dense
(no sparsity) vendor figures unless `measured` says otherwise; they only bound what is
physically possible, so they err high: a kernel faster than flops/peak and
bytes/bandwidth allow is flagged `exceeds_roofline`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GPU:
    key: str
    vendor: str
    match: str                 # regex on the driver's device name
    fp32_tflops: float         # plain fp32 (no tensor cores)
    tensor_tflops: float       # dense fp16/bf16 tensor-core peak
    fp8_tflops: float          # dense fp8/int8 peak (0 if none)
    bandwidth_gbs: float       # DRAM bandwidth, GB/s
    measured: str = ""         # where a figure was measured here instead of taken from a datasheet


GPUS = {g.key: g for g in [
    GPU("RTX3090", "nvidia", r"RTX 3090", 35.6, 142.0, 284.0, 936.0),
    GPU("H100", "nvidia", r"H100", 67.0, 989.0, 1979.0, 3350.0),
    GPU("H200", "nvidia", r"H200", 67.0, 989.0, 1979.0, 4800.0,
        measured="copy 4.3 TB/s and bf16 GEMM 788 TFLOP/s on the device machine (KINDS.md, 2026-10-28); datasheet kept as the bound"),
    GPU("B200", "nvidia", r"B200", 80.0, 2250.0, 4500.0, 8000.0),
    GPU("A100", "nvidia", r"A100", 19.5, 312.0, 624.0, 2039.0),
    GPU("L40S", "nvidia", r"L40S", 91.6, 362.0, 733.0, 864.0),
    GPU("RTX_PRO_6000", "nvidia", r"RTX PRO 6000", 126.0, 504.0, 1008.0, 1792.0),
    GPU("M4MAX", "apple", r"M4 Max", 17.0, 17.0, 0.0, 546.0),
]}


def gpu_key(device_name: str | None) -> str:
    """Canonical key for a driver-reported name ('NVIDIA H200' -> 'H200'); unknown names are slugged."""
    if not device_name:
        return "CPU"
    for g in GPUS.values():
        if re.search(g.match, device_name, re.I):
            return g.key
    return re.sub(r"[^A-Za-z0-9]+", "_", device_name.replace("NVIDIA", "")).strip("_").upper() or "UNKNOWN"


def roofline_ms(gpu: str, flops: int | None, min_bytes: int | None, precision: str = "fp32") -> float | None:
    """The fastest time physics allows for one forward, or None when the GPU or the counts are unknown.

    The bound takes the highest arithmetic peak any honest kernel could use for the precision
    (tensor cores for every float class, since tf32/bf16 tricks are judged by other checks).
    """
    g = GPUS.get(gpu)
    if g is None or (not flops and not min_bytes):
        return None
    peak = g.fp8_tflops if precision in ("fp8", "fp4", "other") and g.fp8_tflops else g.tensor_tflops
    t_compute = (flops or 0) / (peak * 1e12)
    t_memory = (min_bytes or 0) / (g.bandwidth_gbs * 1e9)
    return max(t_compute, t_memory) * 1e3
