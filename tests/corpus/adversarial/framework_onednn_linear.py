"""Square matmul done entirely by oneDNN through torch.ops.mkldnn._linear_pointwise: the profiler sees no aten GEMM.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
The op is the framework's own fp32 GEMM (oneDNN, the same library the reference's aten::mm uses on the CPU), yet it
records no `aten::` event but an `aten::empty`, so the gemm family (matched by aten op names, and on a GPU by kernel
names) never sees it. No kernel of the submission's own runs. Graded ok by the exact-name matching it was written against (red team, 2026-12-02); framework ops are now
matched by their words in any framework namespace (harness/profiled.py, _families).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        # _linear_pointwise(x, w, b, attr, scalars, algorithm) = x @ w.T (+ b): w = B.T
        return torch.ops.mkldnn._linear_pointwise(A, B.t().contiguous(), None, "none", [], "")
