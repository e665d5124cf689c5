"""The grading rules of each suite, as data.

The harness has one code path; what differs between KernelBench (v0.1) and
KernelBench-v3 lives here and travels with every problem row (`Problem.rules`),
so pinning a dataset revision pins its rules too.
"""
from __future__ import annotations

import copy

from .schema import FLAGS, INFORMATIONAL_FLAGS

DEFAULT_FAIL_FLAGS = [f for f in FLAGS if f not in INFORMATIONAL_FLAGS]

# Torch dtype name -> precision class used for v3 tolerances.
PRECISION_CLASS = {
    "float32": "fp32", "float64": "fp32",
    "float16": "fp16", "bfloat16": "bf16",
    "float8_e4m3fn": "fp8", "float8_e5m2": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2fnuz": "fp8",
    "float4_e2m1fn_x2": "fp4",
}

SUITE_RULES = {
    "v0.1": {
        "suite": "v0.1",
        "candidate_class": "ModelNew",
        "weights": "same_seed",
        "model_mode": "train",       # KernelBench never calls .eval()
        "seeds": [42, 43, 44, 45, 46],  # 5 correctness trials, fresh inputs each
        "timing_seed": 42,
        "check": "allclose",
        "tolerances": [{"precision": "any", "atol": 1e-2, "rtol": 1e-2}],
        "precision_from": "fixed_fp32",
        "require_finite": False,
        "require_bitwise_repeat": False,
        "baseline": "eager",
        "compile_mode": "reduce-overhead",
        "compile_threshold": 0.0,
        "warmup": 3,
        "trials": 100,
        "l2_flush": True,
        "reference_after_candidate": True,
        "secret_seed": True,
        "fail_flags": list(DEFAULT_FAIL_FLAGS),
    },
    "v3": {
        "suite": "v3",
        "candidate_class": "Model",
        "weights": "load_state_dict",
        "model_mode": "eval",
        "seeds": [42, 123, 456, 789, 1337],
        "timing_seed": 2026,
        "check": "max_abs_vs_ref_max",
        "tolerances": [
            {"precision": "fp32", "atol": 1e-3, "rtol": 1e-3},
            {"precision": "fp16", "atol": 1e-2, "rtol": 1e-2},
            {"precision": "bf16", "atol": 1e-2, "rtol": 1e-2},
            {"precision": "fp8", "atol": 0.1, "rtol": 0.05},
            {"precision": "fp4", "atol": 0.5, "rtol": 0.1},
            {"precision": "other", "atol": 0.05, "rtol": 0.02},
        ],
        "precision_from": "first_tensor_input_dtype",
        "require_finite": True,
        "require_bitwise_repeat": True,
        "baseline": "compile_if_faster",
        "compile_mode": "reduce-overhead",
        "compile_threshold": 0.95,
        "warmup": 5,
        "trials": 30,
        "l2_flush": True,
        "reference_after_candidate": True,
        "secret_seed": True,
        "fail_flags": list(DEFAULT_FAIL_FLAGS),
    },
}


def rules_for(suite: str) -> dict:
    try:
        return copy.deepcopy(SUITE_RULES[suite])
    except KeyError:
        raise ValueError(f"unknown suite {suite!r}; known: {sorted(SUITE_RULES)}") from None


def precision_class(dtype_name: str | None, rules: dict) -> str:
    """The precision class of a problem's first tensor input under the rules."""
    if rules["precision_from"] == "fixed_fp32" or dtype_name is None:
        return "fp32" if rules["precision_from"] == "fixed_fp32" else "other"
    return PRECISION_CLASS.get(dtype_name.replace("torch.", ""), "other")


def tolerance(rules: dict, precision: str) -> tuple[float, float]:
    """(atol, rtol) for a precision class; 'other' (or 'any') is the fallback."""
    table = {t["precision"]: (t["atol"], t["rtol"]) for t in rules["tolerances"]}
    for key in (precision, "other", "any"):
        if key in table:
            return table[key]
    raise ValueError(f"rules of {rules['suite']} have no tolerance for {precision!r}")


def baseline_choice(rules: dict, eager_ms: float | None, compile_ms: float | None) -> tuple[str, float | None]:
    """Pick (baseline_type, baseline_ms) from the eager and compiled medians."""
    if (rules["baseline"] == "compile_if_faster" and compile_ms is not None and eager_ms is not None
            and compile_ms < rules["compile_threshold"] * eager_ms):
        return "torch_compile", compile_ms
    return "pytorch_eager", eager_ms
