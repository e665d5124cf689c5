"""Sparse matrix-vector product y = A x with ~32 random non-zeros per row, A stored as a dense buffer."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, N: int, nnz_per_row: int):
        super().__init__()
        self.N = N
        self.nnz_per_row = nnz_per_row
        # deliberate side effect of the original: reseeds the global RNG (not restored)
        torch.manual_seed(42)
        rows = torch.arange(N).repeat_interleave(nnz_per_row)
        cols = torch.randint(0, N, (N * nnz_per_row,))
        vals = torch.randn(N * nnz_per_row)
        # duplicate (row, col) entries are summed by coalesce; despite the name, no CSR is used
        matrix = torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, (N, N)).coalesce()
        self.register_buffer("sparse_matrix", matrix.to_dense())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(self.sparse_matrix, x)


def get_inputs():
    x = torch.randn(1024, 1)
    return [x]


def get_init_inputs():
    return [1024, 32]


OP_TYPE = "sparse"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 4
QUIRKS = ["reseeds_global_rng"]
