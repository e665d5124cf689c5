"""Gated DeltaNet layer (short causal convs, gated delta-rule recurrence, normed + gated output); the recurrence runs over heads (upstream layout quirk)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 2048
hidden_size = 2048
num_heads = 16
head_dim_qk = 128
head_dim_v = 128


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False):
    """Pure-PyTorch gated delta rule with the semantics of fla.ops.chunk_gated_delta_rule.

    Time-major inputs: q, k (B, T, H, K), v (B, T, H, V), g (log decay) and beta (B, T, H).
    Per (b, h), with state S (K x V), for t = 0..T-1:
        S <- exp(g_t) S;  S <- S + k_t (beta_t (v_t - S^T k_t))^T;  o_t = S^T (scale q_t).
    Computed in fp32 as a plain recurrence; returns (o in v's dtype, final state or None).
    """
    B, T, H, K = q.shape
    V = v.shape[-1]
    out_dtype = v.dtype
    if scale is None:
        scale = K ** -0.5
    q, k, v, g, beta = (x.float() for x in (q, k, v, g, beta))
    S = q.new_zeros(B, H, K, V) if initial_state is None else initial_state.float().clone()
    o = q.new_empty(B, T, H, V)
    for t in range(T):
        k_t = k[:, t].unsqueeze(-2)  # (B, H, 1, K)
        S = S * g[:, t].exp()[..., None, None]
        v_t = (v[:, t] - (k_t @ S).squeeze(-2)) * beta[:, t, :, None]
        S = S + k_t.transpose(-1, -2) @ v_t.unsqueeze(-2)
        o[:, t] = ((q[:, t] * scale).unsqueeze(-2) @ S).squeeze(-2)
    o = o.to(out_dtype)
    return o, (S if output_final_state else None)


class Model(nn.Module):
    def __init__(self, hidden_size: int, num_heads: int, head_dim_qk: int, head_dim_v: int,
                 use_short_conv: bool = True, conv_kernel_size: int = 4):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim_qk = head_dim_qk
        self.head_dim_v = head_dim_v
        self.use_short_conv = use_short_conv
        self.scale = head_dim_qk ** -0.5
        key_dim = num_heads * head_dim_qk
        value_dim = num_heads * head_dim_v
        self.q_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.k_proj = nn.Linear(hidden_size, key_dim, bias=False)
        self.v_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.a_proj = nn.Linear(hidden_size, num_heads, bias=True)
        self.b_proj = nn.Linear(hidden_size, num_heads, bias=True)
        self.o_proj = nn.Linear(value_dim, hidden_size, bias=False)
        if use_short_conv:
            self.q_conv = nn.Conv1d(key_dim, key_dim, conv_kernel_size, groups=key_dim, padding=conv_kernel_size - 1)
            self.k_conv = nn.Conv1d(key_dim, key_dim, conv_kernel_size, groups=key_dim, padding=conv_kernel_size - 1)
            self.v_conv = nn.Conv1d(value_dim, value_dim, conv_kernel_size, groups=value_dim,
                                    padding=conv_kernel_size - 1)
        self.g_proj = nn.Linear(hidden_size, value_dim, bias=False)
        self.o_norm = nn.LayerNorm(head_dim_v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        q = self.q_proj(x)
        k = self.k_proj(x)
        v = self.v_proj(x)
        if self.use_short_conv:
            # depthwise causal conv: pad 3 both sides, keep the first T outputs
            q = self.q_conv(q.transpose(1, 2))[..., :T].transpose(1, 2)
            k = self.k_conv(k.transpose(1, 2))[..., :T].transpose(1, 2)
            v = self.v_conv(v.transpose(1, 2))[..., :T].transpose(1, 2)
        q, k, v = F.silu(q), F.silu(k), F.silu(v)

        q = q.view(B, T, self.num_heads, self.head_dim_qk).transpose(1, 2)
        k = k.view(B, T, self.num_heads, self.head_dim_qk).transpose(1, 2)
        v = v.view(B, T, self.num_heads, self.head_dim_v).transpose(1, 2)
        alpha = torch.sigmoid(self.a_proj(x)).transpose(1, 2)
        beta = torch.sigmoid(self.b_proj(x)).transpose(1, 2)
        g = torch.log(torch.clamp(alpha, min=1e-6))

        # Upstream quirk, kept: head-major (B, H, T, D) tensors go to a time-major (B, T, H, D) API, so the
        # recurrence runs over the 16 heads and the T token positions act as independent heads.
        o, _ = chunk_gated_delta_rule(q, k, v, g, beta, scale=self.scale)
        o = o.transpose(1, 2)

        o = self.o_norm(o)
        gate = torch.sigmoid(self.g_proj(x)).view(B, T, self.num_heads, self.head_dim_v)
        o = o * gate
        o = o.view(B, T, self.num_heads * self.head_dim_v)
        return self.o_proj(o)


def get_inputs():
    x = torch.randn(batch_size, seq_len, hidden_size)
    return [x]


def get_init_inputs():
    return [hidden_size, num_heads, head_dim_qk, head_dim_v]


OP_TYPE = "model"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
REFERENCE_IMPL = "pure-PyTorch chunk_gated_delta_rule (fp32 recurrence); upstream calls fla.ops.chunk_gated_delta_rule"
KNOWN_ISSUE = ("Head-major (B, 16, T, 128) tensors are passed to the time-major chunk_gated_delta_rule, so the "
               "delta-rule recurrence runs over the 16 heads of each token instead of over the 2048 tokens.")
