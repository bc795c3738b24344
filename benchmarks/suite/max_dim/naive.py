"""Naive first translation of max_dim: one row per program, a running maximum over 128-column chunks."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    tl.store(y_ptr + row, m)


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this kernel reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(M, dtype=x.dtype, device=x.device)
        row_max_kernel[(M,)](x, y, N, BLOCK=128)
        return y
