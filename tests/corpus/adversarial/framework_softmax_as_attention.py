"""Softmax done by the framework's attention: with the identity as keys and values and a scale of 1,
scaled_dot_product_attention(X, I, I) is softmax(X) row by row. The attention op (its math path on the CPU, a fused
kernel on a GPU) does all the work, and attention is not the reference's family.
Problem: v3/level1/23_Softmax
Verdict: rejected [calls_reference_ops]
Device: cpu
Both checks see it on the CPU: the attention family, barred as a substitute for the reference's softmax
(kb_data/rules.py, SUBSTITUTE_FAMILIES), and the softmax that attention's CPU math path dispatches. A GPU's fused
attention kernel would dispatch no softmax op, leaving the substitute rule alone to reject it (not run on a GPU yet).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, x):
        eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return F.scaled_dot_product_attention(x[None], eye[None], eye[None], scale=1.0)[0]
