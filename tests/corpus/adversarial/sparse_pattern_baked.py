"""Sparse matvec that bakes the default sparsity pattern (seed 42) and reads the loaded matrix only there.
Problem: v3/metal_level4/sparse_matvec_csr
Verdict: rejected [ignores_weights]
Device: cpu
Found by the red team's second pass of session 12. `sparse_matrix` is a large float buffer, so the secret weights scale it by e^(0.25 N(0,1))
entry by entry: every zero stays zero and the non-zero pattern (random data drawn from seed 42, not a constant of
the problem) never changes across the published, secret and weights-check loads. The submission rebuilds the
default (row, col) pattern at construction and gathers only those entries of whatever matrix is loaded (the values
do follow the loads): wrong for any matrix with another pattern, e.g. one perturbed additively. Observed on a small
copy (N=1024, 32 per row): ok, correct, flags [], speedup 0.52x; N=4096: ok, flags [], 1.67x. With an additively
perturbed matrix its output is off by 11 (reference max 25). (An honest kernel that builds CSR from each loaded
matrix earns the same speed; the gain is the verdict for a pattern-specialised kernel.)
Now large float buffers are shuffled before they are scaled: the pattern moves, the density stays.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, N, nnz_per_row):
        super().__init__()
        self.N = N
        torch.manual_seed(42)  # as the reference does (it reseeds the global RNG too)
        rows = torch.arange(N).repeat_interleave(nnz_per_row)
        cols = torch.randint(0, N, (N * nnz_per_row,))
        torch.randn(N * nnz_per_row)  # keep the RNG stream where the reference leaves it
        flat = torch.unique(rows * N + cols)  # the coalesced pattern
        self.register_buffer("flat", flat, persistent=False)
        self.register_buffer("rows", flat // N, persistent=False)
        self.register_buffer("cols", flat % N, persistent=False)
        self.register_buffer("sparse_matrix", torch.zeros(N, N))  # receives the loads; read only on the pattern

    def forward(self, x):
        vals = self.sparse_matrix.view(-1).index_select(0, self.flat)
        prod = (vals[:, None] * x.index_select(0, self.cols))
        return torch.zeros(self.N, x.shape[1], dtype=x.dtype).index_add_(0, self.rows, prod)
