"""A realistic grading batch (#23): about 100 submissions over 31 v3 problems, written the way agents write them.

Most are `load_inline` CUDA with several kernels and pybind bindings (tiled GEMMs with fused epilogues, block
reductions, pooling), some naive and slow, some wrong, a few that do not compile, and wrappers that call the
reference's ops around a copy kernel; the rest are Triton. Every source is distinct, so every CUDA one is its own
build, as in a real batch of agent rollouts.

    python benchmarks/realistic_batch.py build OUT          # OUT/manifest.jsonl + OUT/subs/*.py
    python benchmarks/realistic_batch.py summary RUN [RUN]  # per run: wall, stages, verdicts; verdict identity
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAD = """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline
"""

# --- CUDA kernel families: each is (cuda source, cpp declarations, functions); KB_BLOCK varies per variant --------


def _kernel(name: str) -> str:
    """A family's CUDA source, after a blank line (the generated submissions of earlier runs have it)."""
    return "\n" + (Path(__file__).resolve().parent / "realistic_kernels" / name).read_text(encoding="utf-8")


GEMM = _kernel("gemm.cu")
GEMM_CPP = """torch::Tensor gemm(torch::Tensor A, torch::Tensor B, bool trans_b, bool naive);
torch::Tensor linear_epilogue(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t op, double p, bool softmax);"""

ELEMENTWISE = _kernel("elementwise.cu")
ELEMENTWISE_CPP = "torch::Tensor gelu(torch::Tensor x);\ntorch::Tensor softmax_rows(torch::Tensor x);"

NORMS = _kernel("norms.cu")
NORMS_CPP = "torch::Tensor rms_norm(torch::Tensor x, double eps);\ntorch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

REDUCTIONS = _kernel("reductions.cu")
REDUCTIONS_CPP = """torch::Tensor max_pool(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d);
torch::Tensor sum_dim1(torch::Tensor x);
torch::Tensor matvec(torch::Tensor A, torch::Tensor v);
torch::Tensor cross_entropy(torch::Tensor x, torch::Tensor t);"""

COPY = _kernel("copy.cu")
COPY_CPP = "torch::Tensor scaled(torch::Tensor x, double a);"

FAMILIES = {
    "gemm": (GEMM, GEMM_CPP, ["gemm", "linear_epilogue"]),
    "elementwise": (ELEMENTWISE, ELEMENTWISE_CPP, ["gelu", "softmax_rows"]),
    "norms": (NORMS, NORMS_CPP, ["rms_norm", "layer_norm"]),
    "reductions": (REDUCTIONS, REDUCTIONS_CPP, ["max_pool", "sum_dim1", "matvec", "cross_entropy"]),
    "copy": (COPY, COPY_CPP, ["scaled"]),
}

# the model each problem's CUDA submission defines: (family, class body)
CUDA_MODELS = {
    "v3/level1/26_GELU_": ("elementwise", "def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.gelu(x)"),
    "v3/level1/23_Softmax": ("elementwise", "def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.softmax_rows(x)"),
    "v3/level1/36_RMSNorm_": ("norms", "def __init__(self, num_features, eps=1e-5):\n        super().__init__()\n        self.eps = eps\n\n    def forward(self, x):\n        return _ext.rms_norm(x, self.eps)"),
    "v3/level1/40_LayerNorm": ("norms", "def __init__(self, normalized_shape):\n        super().__init__()\n        self.ln = nn.LayerNorm(normalized_shape)\n\n    def forward(self, x):\n        return _ext.layer_norm(x, self.ln.weight, self.ln.bias, self.ln.eps)"),
    "v3/level1/42_Max_Pooling_2D": ("reductions", "def __init__(self, kernel_size, stride, padding, dilation):\n        super().__init__()\n        self.p = (kernel_size, stride, padding, dilation)\n\n    def forward(self, x):\n        return _ext.max_pool(x, *self.p)"),
    "v3/level1/47_Sum_reduction_over_a_dimension": ("reductions", "def __init__(self, dim):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.sum_dim1(x)"),
    "v3/level1/4_Matrix_vector_multiplication_": ("reductions", "def __init__(self):\n        super().__init__()\n\n    def forward(self, A, B):\n        return _ext.matvec(A, B)"),
    "v3/level1/95_CrossEntropyLoss": ("reductions", "def __init__(self):\n        super().__init__()\n\n    def forward(self, predictions, targets):\n        return _ext.cross_entropy(predictions, targets)"),
    **{f"v3/level1/{p}": ("gemm", "def __init__(self):\n        super().__init__()\n\n    def forward(self, A, B):\n        return _ext.gemm(A, B, False, NAIVE)")
       for p in ("1_Square_matrix_multiplication_", "2_Standard_matrix_multiplication_", "3_Batched_matrix_multiplication",
                 "8_Matmul_with_irregular_shapes_", "9_Tall_skinny_matrix_multiplication_")},
    "v3/level2/40_Matmul_Scaling_ResidualAdd": ("gemm", "def __init__(self, in_features, out_features, scaling_factor):\n        super().__init__()\n        self.matmul = nn.Linear(in_features, out_features)\n        self.s = scaling_factor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.matmul.weight, self.matmul.bias, 1, self.s, False)"),
    "v3/level2/59_Matmul_Swish_Scaling": ("gemm", "def __init__(self, in_features, out_features, scaling_factor):\n        super().__init__()\n        self.matmul = nn.Linear(in_features, out_features)\n        self.s = scaling_factor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.matmul.weight, self.matmul.bias, 2, self.s, False)"),
    "v3/level2/86_Matmul_Divide_GELU": ("gemm", "def __init__(self, input_size, output_size, divisor):\n        super().__init__()\n        self.linear = nn.Linear(input_size, output_size)\n        self.d = divisor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.linear.weight, self.linear.bias, 3, self.d, False)"),
    "v3/level2/99_Matmul_GELU_Softmax": ("gemm", "def __init__(self, in_features, out_features):\n        super().__init__()\n        self.linear = nn.Linear(in_features, out_features)\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.linear.weight, self.linear.bias, 4, 1.0, True)"),
}

# problems whose submissions wrap the reference's own forward around a copy kernel (CUDA) or a Triton copy
WRAPPED = ["v3/level2/17_Conv2d_InstanceNorm_Divide", "v3/level2/46_Conv2d_Subtract_Tanh_Subtract_AvgPool",
           "v3/level2/52_Conv2d_Activation_BatchNorm", "v3/level2/6_Conv3d_Softmax_MaxPool_MaxPool",
           "v3/level2/73_Conv2d_BatchNorm_Scaling", "v3/level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max",
           "v3/level2/85_Conv2d_GroupNorm_Scale_MaxPool_Clamp", "v3/level2/37_Matmul_Swish_Sum_GroupNorm",
           "v3/level2/55_Matmul_MaxPool_Sum_Scale", "v3/level2/66_Matmul_Dropout_Mean_Softmax",
           "v3/level2/98_Matmul_AvgPool_GELU_Scale_Max", "v3/level3/31_VisionAttention",
           "v3/level3/43_MinGPTCausalAttention", "v3/level3/44_MiniGPTBlock"]

SUBSTITUTIONS = {"GELU_K": "0.70710678118654752f", "SOFTMAX_NORM": "1.f", "LN_BIAS(v)": "(v)"}
WRONG = {  # what makes a variant wrong: a constant an agent got wrong
    "v3/level1/26_GELU_": ("GELU_K", "0.7978845608f"),
    "v3/level1/23_Softmax": ("SOFTMAX_NORM", "0.5f"),
    "v3/level1/40_LayerNorm": ("LN_BIAS(v)", "0.f"),
}


def cuda_source(pid: str, family: str, body: str, block: int, variant: str, *, naive: bool = False,
                wrong: bool = False, broken: bool = False) -> str:
    src, cpp, functions = FAMILIES[family]
    subs = dict(SUBSTITUTIONS)
    if wrong:
        k, v = WRONG[pid]
        subs[k] = v
    defines = f"#define KB_BLOCK {block}\n" + "".join(f"#define {k} {v}\n" for k, v in subs.items())
    if broken:  # the typical compile error: a helper used before it is declared
        src = src.replace("__global__", "__global__ void helper_typo(float* x) { x[0] = undeclared_scale * 2.f; }\n__global__", 1)
    name = f"kb_{family}_{variant}"
    return (HEAD + f'\n# {pid}: {family} kernels, block {block}{" (naive)" if naive else ""}\n'
            f'CUDA_SRC = r"""\n{defines}{src}"""\nCPP_SRC = """{cpp}"""\n'
            f'_ext = load_inline("{name}", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions={functions!r},\n'
            f'                   extra_cuda_cflags=["-O3"], verbose=False)\nNAIVE = {naive}\n\n\n'
            f"class ModelNew(nn.Module):\n    {body}\n")


def wrapper_source(pid: str, problem_code: str, block: int, variant: str) -> str:
    src, cpp, functions = FAMILIES["copy"]
    return (problem_code + f'\n\nfrom torch.utils.cpp_extension import load_inline\n\nCUDA_SRC = r"""\n#define KB_BLOCK {block}\n{src}"""\n'
            f'_ext = load_inline("kb_copy_{variant}", cpp_sources="""{cpp}""", cuda_sources=CUDA_SRC, functions={functions!r})\n\n\n'
            "class ModelNew(Model):\n    def forward(self, *args):\n        return _ext.scaled(super().forward(*args), 1.0)\n")


TRITON_HEAD = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"

TRITON_KERNELS = {
    "gelu": ("""
@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)
""", """def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        gelu_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, x.numel(), BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "softmax": ("""
@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
        m = tl.maximum(m, x)
    mx = tl.max(m, 0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
        s += tl.exp(x - mx)
    total = tl.sum(s, 0)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        x = tl.load(x_ptr + row * N + start + offs, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * N + start + offs, tl.exp(x - mx) / total, mask=mask)
""", """def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "rmsnorm": ("""
@triton.jit
def rms_kernel(x_ptr, y_ptr, C, HW, eps, BLOCK: tl.constexpr):
    b = tl.program_id(1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = x_ptr + b * C * HW + offs
    s = tl.zeros([BLOCK], tl.float32)
    for c in range(0, C):
        v = tl.load(base + c * HW, mask=mask, other=0.0)
        s += v * v
    inv = 1.0 / tl.sqrt(s / C + eps)
    for c in range(0, C):
        v = tl.load(base + c * HW, mask=mask, other=0.0)
        tl.store(y_ptr + b * C * HW + c * HW + offs, v * inv, mask=mask)
""", """def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        B, C = x.shape[:2]
        hw = x.numel() // (B * C)
        rms_kernel[(triton.cdiv(hw, BLOCK), B)](x, y, C, hw, self.eps, BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "matmul": ("""
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BLOCK + tl.arange(0, BLOCK)
    rn = pn * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BLOCK, BLOCK], tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
""", """def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, device=A.device, dtype=A.dtype)
        mm_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](A, B, C, M, N, K, BLOCK=BLOCK, BK=16, num_warps=WARPS)
        return C"""),
}
TRITON_PROBLEMS = {"gelu": ["v3/level1/26_GELU_"], "softmax": ["v3/level1/23_Softmax"], "rmsnorm": ["v3/level1/36_RMSNorm_"],
                   "matmul": ["v3/level1/1_Square_matrix_multiplication_", "v3/level1/2_Standard_matrix_multiplication_",
                              "v3/level1/8_Matmul_with_irregular_shapes_"]}

TRITON_COPY = """
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(Model):
    def forward(self, *args):
        out = super().forward(*args).contiguous()
        y = torch.empty_like(out)
        copy_kernel[(triton.cdiv(out.numel(), BLOCK),)](out, y, out.numel(), BLOCK=BLOCK, num_warps=WARPS)
        return y
"""


def triton_source(kind: str, pid: str, block: int, warps: int) -> str:
    kernel, body = TRITON_KERNELS[kind]
    return (TRITON_HEAD + f"\n# {pid}: Triton {kind}, block {block}, {warps} warps\nBLOCK, WARPS = {block}, {warps}\n"
            f"{kernel}\n\nclass ModelNew(nn.Module):\n    {body}\n")


def submissions() -> list[tuple[str, str, str]]:
    """(problem id, kind, source) for the whole batch, in a fixed order (problems interleaved, as a queue of
    rollouts would be)."""
    out = []
    problems = ROOT / "problems"
    for i, (pid, (family, body)) in enumerate(CUDA_MODELS.items()):
        for j, block in enumerate((128, 256, 512)):
            out.append((pid, "cuda", cuda_source(pid, family, body, block, f"{i}_{j}")))
        if family == "gemm" and pid.startswith("v3/level1/") and not pid.startswith("v3/level1/8_"):
            out.append((pid, "cuda_naive", cuda_source(pid, family, body, 256, f"{i}_naive", naive=True)))
        if pid in WRONG:
            out.append((pid, "cuda_wrong", cuda_source(pid, family, body, 256, f"{i}_wrong", wrong=True)))
        if i % 4 == 1:
            out.append((pid, "cuda_broken", cuda_source(pid, family, body, 256, f"{i}_broken", broken=True)))
    for i, pid in enumerate(WRAPPED):
        code = (problems / (pid + ".py")).read_text(encoding="utf-8")
        out.append((pid, "cuda_wrapper", wrapper_source(pid, code, 256, f"w{i}")))
        out.append((pid, "triton_wrapper", code.replace("import torch\n", "import torch\nimport triton\nimport triton.language as tl\n", 1)
                    + f"\nBLOCK, WARPS = {1024 * (1 + i % 2)}, {4 * (1 + i % 2)}\n" + TRITON_COPY))
    for kind, pids in TRITON_PROBLEMS.items():
        for pid in pids:
            for block, warps in ((64, 4), (128, 8)) if kind == "matmul" else ((1024, 4), (2048, 8), (4096, 8)):
                out.append((pid, f"triton_{kind}", triton_source(kind, pid, block, warps)))
    order = sorted(range(len(out)), key=lambda k: (k * 7919) % len(out))  # a fixed shuffle
    return [out[k] for k in order]


def build(out: Path) -> None:
    subs = out / "subs"
    subs.mkdir(parents=True, exist_ok=True)
    rows = []
    for n, (pid, kind, src) in enumerate(submissions()):
        path = subs / f"{n:03d}_{pid.split('/')[-1]}_{kind}.py"
        path.write_text(src, encoding="utf-8")
        rows.append({"problem": pid, "submission": str(path.relative_to(out)), "model": kind})
    (out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kinds = Counter(r["model"] for r in rows)
    print(f"{len(rows)} submissions over {len({r['problem'] for r in rows})} problems: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


def _median(xs):
    return round(statistics.median(xs), 2) if xs else None


def summary(runs: list[Path]) -> None:
    verdicts, judged = [], []
    for run in runs:
        rows = [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        meta = json.loads((run / "wall.json").read_text()) if (run / "wall.json").exists() else {}
        stages = [json.loads(r["harness_seconds"]) if isinstance(r.get("harness_seconds"), str) else r.get("harness_seconds") or {}
                  for r in rows]  # a JSON string in the record
        locked = [s["worker_wall"] for s in stages if s.get("worker_wall")]
        wall = meta.get("wall_s")
        print(f"{run.name}: {len(rows)} records" + (f" in {wall:.0f} s wall, {wall / max(1, len(rows)):.2f} s per submission"
                                                    if wall else "") + f" ({meta.get('what', '')})")
        print("  status: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r["status"] for r in rows).items())))
        for kind in sorted({r["model"] for r in rows}):
            sel = [r for r in rows if r["model"] == kind]
            print(f"  {kind:15s} n={len(sel):3d} " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r['status'] for r in sel).items())))
        print(f"  GPU-locked (judge wall) median {_median(locked)} s, p90 "
              f"{round(sorted(locked)[int(0.9 * (len(locked) - 1))], 2) if locked else None} s, sum {round(sum(locked), 1)} s")
        if any(s.get("baseline") for s in stages):  # a GPU without stored rows times each problem's baseline once
            rest = [s["worker_wall"] - (s.get("baseline") or 0.0) for s in stages if s.get("worker_wall")]
            print(f"  GPU-locked less the baselines' measurement: median {_median(rest)} s, sum {round(sum(rest), 1)} s")
        order = ("build", "build_wait", "setup", "baseline", "reference_alone", "calibration",
                 "import_and_build_submission", "correctness", "secret_weights", "timing", "dynamic_checks")
        seen = {k for s in stages for k in s} - {"worker_wall"}  # every stage a record names, the unforeseen ones last
        for key in (*order, *sorted(seen - set(order))):
            xs = [s[key] for s in stages if s.get(key) is not None]
            if xs:
                print(f"  stage {key:28s} n={len(xs):3d} median {_median(xs)} s, sum {round(sum(xs), 1)} s")
        details = [json.loads(r["flag_details"]) if r.get("flag_details") else {} for r in rows]
        moved = {}  # per record, each GPU phase's timed median less its calibration's (ms a call): where the excess went
        for d in details:
            ph = (d.get("timing_bound") or {}).get("phases_ms") or {}
            if ph.get("calibration") and ph.get("timed"):
                for key, ms in ph["timed"].items():
                    moved.setdefault(key, []).append(ms - ph["calibration"].get(key, ms))
        if moved:
            print("  GPU phases, timed less calibration, ms a call (median over records): "
                  + ", ".join(f"{key} {round(statistics.median(xs), 3)}" for key, xs in moved.items()))
        reused = sum("resident" in str(d.get("judge")) for d in details)
        print(f"  judge: the reference reused (resident judge) in {reused} of {len(rows)}")
        verdicts.append({(r["problem_id"], r["solution_sha256"]): (r["status"], tuple(sorted(r.get("flags") or [])))
                         for r in rows})
        judged.append({(r["problem_id"], r["solution_sha256"]): s.get("worker_wall") for r, s in zip(rows, stages)})
    for run, v, w in zip(runs[1:], verdicts[1:], judged[1:]):
        both = verdicts[0].keys() & v.keys()
        differ = sorted(k for k in both if verdicts[0][k] != v[k])
        print(f"verdicts {runs[0].name} vs {run.name}: {len(both)} graded in both, {len(differ)} differ")
        for k in differ:
            print(f"  {k[0]} {k[1][:10]}: {verdicts[0][k]} vs {v[k]}")
        pairs = [(judged[0][k], w[k]) for k in both if judged[0][k] and w[k]]
        if pairs:  # the arms may stop at different points: compare the submissions both graded
            a, b = zip(*pairs)
            print(f"  GPU-locked on those {len(pairs)}: median {_median(list(a))} vs {_median(list(b))} s, "
                  f"sum {round(sum(a), 1)} vs {round(sum(b), 1)} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build").add_argument("out", type=Path)
    sub.add_parser("summary").add_argument("runs", type=Path, nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "build":
        build(args.out)
    else:
        summary(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
