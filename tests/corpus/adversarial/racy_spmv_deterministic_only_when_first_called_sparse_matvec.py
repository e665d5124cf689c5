"""A nondeterministic sparse matvec (every row's products added in a fresh random order each call, as a kernel
whose threads add into a row with atomics would) that is deterministic only in its first two calls: the bitwise
repeat of the first published seed, the one check of determinism a submission can place (its first two `forward`
commands). The timed bitwise repeat, which should catch the rest, compares the twin's outputs with the original's
only where the reference's forward-mode tangent does not reach the redrawn value of x; the reference is a dense
matmul over a matrix that is mostly zeros, and 0 * NaN = NaN, so the NaN tangent reaches every row: no value is left
to compare, and the check passed whatever the twin returned (red team, session 35: ok 3 of 3 at 5 trials). Where the
NaN reaches every value, the judge now also carries a tangent of one through a float64 copy of the reference, which
stays zero past an exact zero's product: the rows that do not hold the redrawn column are compared. (A partial flood
stays: in the minGPT block, att @ v carries a masked position's 0 * NaN to every row of its batch element.)
Problem: v3/metal_level4/sparse_matvec_csr
Verdict: rejected [nondeterministic]
Device: cpu
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, N, nnz_per_row):
        super().__init__()
        self.N, self.width = N, nnz_per_row
        self.register_buffer("sparse_matrix", torch.zeros(N, N))
        self.ell = None
        self.calls = 0
        self.gen = torch.Generator().manual_seed(torch.initial_seed() % (2**31))
        self._register_load_state_dict_pre_hook(lambda *a, **k: setattr(self, "ell", None))

    def _build(self):
        A = self.sparse_matrix
        nz = A != 0
        order = torch.argsort((~nz).to(torch.int8), dim=1, stable=True)[:, : self.width]
        self.ell = (order.contiguous(), torch.gather(A, 1, order).contiguous())

    def forward(self, x):
        if self.ell is None:
            self._build()
        cols, vals = self.ell
        self.calls += 1
        prods = vals * x[:, 0][cols]
        if self.calls > 2:  # the "atomics": each row's terms in an order that changes from call to call
            perm = torch.randperm(prods.shape[1], generator=self.gen)
            prods = prods[:, perm]
        out = torch.zeros(prods.shape[0], dtype=prods.dtype)
        for j in range(prods.shape[1]):  # sequential adds: the order decides the last bits
            out += prods[:, j]
        return out[:, None]
