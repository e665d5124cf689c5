"""Sparse matvec in ELLPACK with the problem's own row width (nnz_per_row), built once per load: honest.
Problem: v3/metal_level4/sparse_matvec_csr
Verdict: ok
Device: cpu
Found by the red team's third pass of session 12. The problem builds its matrix with `nnz_per_row` draws in every
row (an init argument, and its docstring says "~32 random non-zeros per row"), so no row holds more than 32 values:
an ELLPACK kernel whose width is the problem's `nnz_per_row` (a fixed-shape gather, the natural GPU layout here)
is exact for every matrix the problem can make, whatever its seed. The secret weights shuffle the dense buffer
over all N*N places, so rows get Binomial-many non-zeros (mean 31.5, the fullest row about 50 at N=1024) and the fixed width drops some:
`ignores_weights`. The shuffle keeps the density but destroys a structure the problem states; whether a kernel may
rely on it is a policy question (a general sparse kernel would size its rows per load), but SECURITY.md's
"a sparsity pattern moves, its density stays" does not say that the per-row bound goes too.
Observed on the small copy: rejected [ignores_weights] (secret weights: max|ref-sol| 12.7 against a bound of
0.0195); with the default weights (published seeds) it is exact.
Now each row is shuffled on its own: a row keeps its count of non-zeros, and this kernel is graded ok.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, N, nnz_per_row):
        super().__init__()
        self.N, self.width = N, nnz_per_row
        self.register_buffer("sparse_matrix", torch.zeros(N, N))
        self.ell = None
        self._register_load_state_dict_pre_hook(lambda *a, **k: setattr(self, "ell", None))

    def _build(self):
        A = self.sparse_matrix
        nz = A != 0
        # per row, the column indices of its non-zeros first (stable), then padding; keep `width` of them
        order = torch.argsort((~nz).to(torch.int8), dim=1, stable=True)[:, : self.width]
        vals = torch.gather(A, 1, order)
        self.ell = (order.contiguous(), vals.contiguous())

    def forward(self, x):
        if self.ell is None:
            self._build()
        cols, vals = self.ell
        return (vals * x[:, 0][cols]).sum(1, keepdim=True)
