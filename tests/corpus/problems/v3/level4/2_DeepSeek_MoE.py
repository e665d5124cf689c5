"""DeepSeek-V3-style MoE layer: sigmoid gate with group-limited top-8 routing over 64 experts, SwiGLU experts, plus shared experts."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
seq_len = 32
hidden_size = 64
intermediate_size = 32
n_routed_experts = 16
num_experts_per_tok = 4
n_group = 4
topk_group = 2
n_shared_experts = 2
routed_scaling_factor = 2.5


class MoEGate(nn.Module):
    def __init__(self, hidden_size: int, n_routed_experts: int, top_k: int, n_group: int, topk_group: int,
                 routed_scaling_factor: float = 1.0, norm_topk_prob: bool = True):
        super().__init__()
        self.top_k = top_k
        self.n_routed_experts = n_routed_experts
        self.n_group = n_group
        self.topk_group = topk_group
        self.routed_scaling_factor = routed_scaling_factor
        self.norm_topk_prob = norm_topk_prob
        self.weight = nn.Parameter(torch.empty(n_routed_experts, hidden_size))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.register_buffer("e_score_correction_bias", torch.zeros(n_routed_experts))

    def forward(self, hidden_states: torch.Tensor):
        h = hidden_states.shape[-1]
        hidden_states = hidden_states.view(-1, h)
        num_tokens = hidden_states.shape[0]
        logits = F.linear(hidden_states.type(torch.float32), self.weight.type(torch.float32), None)
        scores = logits.sigmoid()

        # group-limited selection on the bias-corrected scores
        scores_for_choice = scores + self.e_score_correction_bias.unsqueeze(0)
        group_scores = scores_for_choice.view(num_tokens, self.n_group, -1).topk(2, dim=-1)[0].sum(dim=-1)
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1)
        score_mask = (group_mask.unsqueeze(-1)
                      .expand(num_tokens, self.n_group, self.n_routed_experts // self.n_group)
                      .reshape(num_tokens, -1))
        tmp_scores = scores_for_choice.masked_fill(~score_mask.bool(), 0.0)
        _, topk_idx = torch.topk(tmp_scores, k=self.top_k, dim=-1, sorted=False)

        # weights come from the uncorrected scores
        topk_weight = scores.gather(1, topk_idx)
        if self.top_k > 1 and self.norm_topk_prob:
            denominator = topk_weight.sum(dim=-1, keepdim=True) + 1e-20
            topk_weight = topk_weight / denominator
        topk_weight = topk_weight * self.routed_scaling_factor
        return topk_idx, topk_weight


class Model(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int, n_routed_experts: int, num_experts_per_tok: int,
                 n_group: int, topk_group: int, n_shared_experts: int, routed_scaling_factor: float):
        super().__init__()
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.n_routed_experts = n_routed_experts
        self.num_experts_per_tok = num_experts_per_tok
        self.n_shared_experts = n_shared_experts
        self.gate_proj = nn.Parameter(torch.randn(n_routed_experts, intermediate_size, hidden_size) * 0.02)
        self.up_proj = nn.Parameter(torch.randn(n_routed_experts, intermediate_size, hidden_size) * 0.02)
        self.down_proj = nn.Parameter(torch.randn(n_routed_experts, hidden_size, intermediate_size) * 0.02)
        self.gate = MoEGate(hidden_size, n_routed_experts, num_experts_per_tok, n_group, topk_group,
                            routed_scaling_factor=routed_scaling_factor)
        shared_dim = intermediate_size * n_shared_experts
        self.shared_gate_proj = nn.Linear(hidden_size, shared_dim, bias=False)
        self.shared_up_proj = nn.Linear(hidden_size, shared_dim, bias=False)
        self.shared_down_proj = nn.Linear(shared_dim, hidden_size, bias=False)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        assert not self.training
        identity = hidden_states
        orig_shape = hidden_states.shape
        topk_idx, topk_weight = self.gate(hidden_states)

        x = hidden_states.view(-1, self.hidden_size)
        num_tokens = x.shape[0]
        flat_idx = topk_idx.view(-1)
        x_rep = x.unsqueeze(1).expand(-1, self.num_experts_per_tok, -1).reshape(-1, self.hidden_size)
        # Upstream design, kept: one full expert weight matrix gathered per (token, slot) pair
        # (65536 x 1408 x 2048 fp32, ~756 GB per projection), so this only runs on the meta device.
        w_gate = self.gate_proj[flat_idx]
        w_up = self.up_proj[flat_idx]
        w_down = self.down_proj[flat_idx]
        x_col = x_rep.unsqueeze(-1)
        gate_out = torch.bmm(w_gate, x_col).squeeze(-1)
        up_out = torch.bmm(w_up, x_col).squeeze(-1)
        inter = F.silu(gate_out) * up_out
        expert_out = torch.bmm(w_down, inter.unsqueeze(-1)).squeeze(-1)
        expert_out = expert_out.view(num_tokens, self.num_experts_per_tok, self.hidden_size)
        y = (expert_out * topk_weight.unsqueeze(-1)).sum(dim=1).view(*orig_shape)

        shared = self.shared_down_proj(F.silu(self.shared_gate_proj(identity)) * self.shared_up_proj(identity))
        return y + shared


def get_inputs():
    hidden_states = torch.randn(batch_size, seq_len, hidden_size)
    return [hidden_states]


def get_init_inputs():
    return [hidden_size, intermediate_size, n_routed_experts, num_experts_per_tok, n_group, topk_group,
            n_shared_experts, routed_scaling_factor]


OP_TYPE = "model"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
KNOWN_ISSUE = ("The routed-expert step gathers a full expert weight matrix per (token, slot) pair "
               "(65536 x 1408 x 2048 fp32, about 756 GB for each of gate/up/down), so the reference cannot run "
               "on any GPU and only runs on the meta device.")
