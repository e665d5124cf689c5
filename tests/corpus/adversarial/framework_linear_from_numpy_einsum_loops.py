"""The level-2 Linear + scale + residual with its GEMM through numpy's einsum loops (no BLAS; the class of
adversarial/framework_gemm_from_numpy_einsum_loops), following the loaded weights. Red team, session 41 (CPU, strong
sandbox, 5 trials, a loaded host): ok 0.889, 0.462 and 1.869x where the honest broadcast product
(honest/torch_fused_matmul_scale_residual) got 0.05-0.17x. numpy's compiled array math is the framework's code now.
Problem: v3/level2/40_Matmul_Scaling_ResidualAdd
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = torch.from_numpy(np.einsum("bi,oi->bo", x.numpy(), self.matmul.weight.detach().numpy())) + self.matmul.bias
        return y * (1.0 + self.scaling_factor)
