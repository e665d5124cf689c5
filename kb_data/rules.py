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

# Families of heavy framework work, by the framework ops that do it (matched by their words, harness/profiled.py) and
# the vendor-library kernels that run it (whoever launched them), and on a CPU the framework's functions the judge's
# sampler found the timed calls in (`cpu`, searched in the demangled name, template arguments included: a kernel's
# loop body is a lambda of the function named after its op). A candidate that runs a family its problem's reference runs did not write that part.
OP_FAMILIES = {
    "gemm": {"ops": ["gemm", "mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "dot", "einsum", "_scaled_mm",
                     "addbmm", "tensordot", "_addmm_activation"],
             "kernels": r"gemm|cublas|cutlass|xmma|nvjet|sm\d+_xmma|gemv|splitKreduce|cask_|ampere_|hopper_",
             "cpu": r"gemm|gemv|addmm|bmm|matmul|::mm_|::mv_|sum_of_products|matrix_multiply"},
    "conv": {"ops": ["conv", "convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                     "conv_transpose3d", "cudnn_convolution", "mkldnn_convolution", "conv_depthwise2d",
                     "_conv_depthwise2d", "slow_conv2d_forward", "cudnn_convolution_transpose"],
             "kernels": r"cudnn|implicit_convolve|precomputed_convolve|explicit_convolve|conv2d|convolve|fprop|dgrad|wgrad",
             "cpu": r"convolution|conv_?[123]d|conv_?transpose|conv_?depthwise|winograd"},
    "attention": {"ops": ["scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                          "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                          "_flash_attention_forward", "_efficient_attention_forward"],
                  "kernels": r"flash_fwd|fmha|pytorch_flash|efficient_attention|cudnn.*attn",
                  "cpu": r"attention"},
    "norm": {"ops": ["native_layer_norm", "layer_norm", "native_group_norm", "group_norm", "native_batch_norm",
                     "batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
                     "cudnn_batch_norm", "rms_norm", "_fused_rms_norm", "instance_norm"],
             "kernels": r"layer_norm|group_norm|batch_norm|rms_norm|bn_fw|welford",
             "cpu": r"(layer|group|batch|rms|instance)_?norm"},
    "softmax": {"ops": ["_softmax", "softmax", "_log_softmax", "log_softmax", "cross_entropy_loss", "nll_loss_forward"],
                "kernels": r"softmax", "cpu": r"softmax"},
    "pool": {"ops": ["max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool2d", "avg_pool3d",
                     "adaptive_avg_pool2d", "_adaptive_avg_pool2d"], "kernels": r"pool",
             "cpu": r"(max|avg)_?pool"},
    "scan_sort": {"ops": ["cumsum", "cumprod", "sort", "topk", "argsort"], "kernels": r"radixSort|bitonicSort|gatherTopK|scan",
                  "cpu": r"cumsum|cumprod|topk|sort_stable|sort_kernel|argsort"},
    "fft": {"ops": ["_fft_c2c", "_fft_r2c", "_fft_c2r"], "kernels": r"fft", "cpu": r"fft|dft"},
    "activation": {"ops": ["gelu", "silu", "mish", "hardswish", "softplus", "elu", "selu"], "kernels": r"gelu|silu",
                   "cpu": r"gelu|silu|mish|hardswish|softplus|\belu_|\bselu"},
    "resample": {"ops": ["upsample_bicubic2d", "upsample_bilinear2d", "upsample_nearest2d", "grid_sampler_2d"],
                 "kernels": r"upsample|grid_sampler", "cpu": r"upsample|grid_sampler"},
    "embedding_bag": {"ops": ["_embedding_bag", "embedding_bag", "_embedding_bag_forward_only"],
                      "kernels": r"embedding_bag|EmbeddingBag", "cpu": r"embedding_?bag|EmbeddingSpMDM"},
    "rnn": {"ops": ["lstm", "gru", "rnn", "rnn_tanh", "rnn_relu"], "kernels": r"rnn|lstm|gru", "cpu": r"lstm|gru_cell|_gru\b|rnn_(tanh|relu)"},
    "linalg_solve": {"ops": ["solve", "lstsq", "inv", "inverse"], "kernels": r"trsm|getr[sf]|potr[sf]|cusolver|magma",
                     "cpu": r"trsm|getr[sf]|potr[sf]|gesv|linalg_solve|linalg_inv"},
}

# Families that can do another's heavy work (a GEMM as a 1x1 convolution, through attention, as an embedding bag's
# weighted sums, inside a recurrent cell's gates or a triangular solve, a convolution as a GEMM over unfolded inputs, attention as two GEMMs, an average pool as a
# convolution, a softmax through attention): where the reference runs the key, the candidate's framework ops may run
# none of these either.
SUBSTITUTE_FAMILIES = {"gemm": ("conv", "attention", "embedding_bag", "rnn", "linalg_solve"), "conv": ("gemm", "attention"), "attention": ("gemm", "conv"),
                       "softmax": ("attention",), "pool": ("conv",)}

# Families whose CPU kernels the framework generates at run time (oneDNN's and MKL's JIT GEMMs, convolutions, fused
# attention and recurrent cells): where a problem bars one, code generated at run time in the timed calls is its work,
# whatever the profile shows (harness/profiled.py, framework_unseen).
CPU_CODE_GENERATING_FAMILIES = ("gemm", "conv", "attention", "rnn")

# The anti-cheat numbers every suite shares (our harness's, not upstream's): they travel in each row's rules.
CHECKS = {
    "tolerance_from": "reference_outputs",
    "forbidden_op_families": sorted(OP_FAMILIES),
    "excessive_speedup": 10.0,
    "roofline_slack": 0.9,
    "roofline_slack_cpu": 0.25,
    "profile_busy_slack": 1.5,
    "profile_busy_margin_ms": 0.05,
    "profile_busy_margin_ms_cpu": 10.0,
    "framework_unseen_slack_cpu": 2.0,
    "framework_unseen_margin_ms_cpu": 1.0,
    "cpu_share_slack": 1.25,
    "cpu_share_margin_ms": 2.0,
    "timing_bound_slack": 1.5,
    "timing_bound_margin_ms": 1.0,
    "timing_bound_margin_ms_cpu": 10.0,
    "timing_bound_slack_forward": 1.25,
    "timing_bound_margin_ms_forward": 0.2,
    "timing_bound_slack_aside": 1.25,
    "timing_bound_margin_ms_rest": 0.05,
    "timing_bound_batch_share": 0.5,
    "timing_bound_slack_gated": 1.1,
    "timing_bound_margin_ms_gated": 0.02,
    "timing_bound_margin_ms_gated_batch": 0.1,
    "flush_floor_share": 0.5,
    "precision_floor_scale_fp16": 100.0,
    "precision_floor_scale_bf16": 400.0,
    "overclaim_factor": 1.01,
    "overclaim_ms": 0.05,
    "reference_slowdown_limit": 3.0,
    "reference_slowdown_min_ms": 0.1,
    "reference_slowdown_min_ms_cpu": 10.0,
    "reference_batch_slack": 1.5,
    "reference_batch_margin_ms_cpu": 0.1,
    "interrupt_storm_per_s": 10000.0,
    "interrupt_storm_min": 50,
    "precision_factor": 20.0,
    "precision_floor": 5e-5,
    "constant_rel": 1e-6,
    "flush_slowdown": 1.15,
    "flush_slowdown_min_ms": 0.004,
    "weights_perturbation": 0.25,
    "constant_buffer_numel": 4096,
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
        **CHECKS,
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
        **CHECKS,
    },
}


PRECISION_ORDER = ("fp4", "fp8", "bf16", "fp16", "fp32")  # least precise first


def tolerance_precision(input_dtypes: list[str], output_dtypes: list[str], rules: dict) -> str:
    """Our tolerance class: the least precise of the reference's floating outputs and floating inputs (an int8
    first input no longer gives an fp16 problem the loose "other" class). The suite's published rule
    (precision_from) is kept in `precision_class` for what upstream would say."""
    if rules.get("precision_from") == "fixed_fp32":
        return "fp32"
    classes = [PRECISION_CLASS.get(d.replace("torch.", "")) for d in list(output_dtypes) + list(input_dtypes)]
    classes = [c for c in classes if c in PRECISION_ORDER]
    if not classes:
        return precision_class(input_dtypes[0] if input_dtypes else None, rules)
    return min(classes, key=PRECISION_ORDER.index)


def with_checks(rules: dict) -> dict:
    """Rules from an older dataset revision, completed with today's anti-cheat numbers where they lack them."""
    return {**CHECKS, **{k: v for k, v in rules.items() if v is not None}}


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
