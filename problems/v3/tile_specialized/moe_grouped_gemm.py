"""Top-2 MoE expert computation as a grouped GEMM: per expert, gather its tokens, x @ W_up @ W_down, weighted scatter-add."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_experts: int = 8, hidden_dim: int = 1024, expert_dim: int = 3072):
        super().__init__()
        self.num_experts = num_experts
        self.hidden_dim = hidden_dim
        self.expert_dim = expert_dim
        # (in_features, out_features) layout: tokens @ W, no transpose
        self.expert_up = nn.Parameter(torch.randn(num_experts, hidden_dim, expert_dim) * 0.02)
        self.expert_down = nn.Parameter(torch.randn(num_experts, expert_dim, hidden_dim) * 0.02)

    def forward(self, x: torch.Tensor, expert_indices: torch.Tensor, expert_weights: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        top_k = expert_indices.shape[-1]
        x_flat = x.view(batch * seq, hidden)
        idx = expert_indices.view(batch * seq, top_k)
        w = expert_weights.view(batch * seq, top_k)
        out = torch.zeros_like(x_flat)
        for e in range(self.num_experts):
            mask = idx == e
            if not mask.any():  # host sync
                continue
            token_ids, route_ids = torch.nonzero(mask, as_tuple=True)
            tokens = x_flat[token_ids]
            route_w = w[token_ids, route_ids].unsqueeze(-1)
            up = tokens @ self.expert_up[e]  # no activation between the two GEMMs
            down = up @ self.expert_down[e]
            # a token routed twice to the same expert is added twice
            out.index_add_(0, token_ids, down * route_w)
        return out.view(batch, seq, hidden)


def get_inputs():
    x = torch.randn(4, 256, 1024)
    expert_indices = torch.randint(0, 8, (4, 256, 2))
    expert_weights = torch.softmax(torch.randn(4, 256, 2), dim=-1)
    return [x, expert_indices, expert_weights]


def get_init_inputs():
    return []


OP_TYPE = "moe_grouped_gemm"
SUPPORTED_PRECISIONS = ["fp8", "bf16", "fp16"]
HARDWARE_REQUIRED = ["H100", "B200"]
SPECIALIZED_LEVEL = 1
QUIRKS = ["data_dependent"]
