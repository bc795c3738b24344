"""Naive first translation of max_with_index: one row per program, two passes over 128-column chunks (the row
maximum, then the first column holding it)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_with_index_kernel(x_ptr, val_ptr, idx_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    idx = n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        hit = (x == m) & (cols < n_cols)
        idx = tl.minimum(idx, tl.min(tl.where(hit, cols, n_cols), axis=0))
    tl.store(val_ptr + row, m)
    tl.store(idx_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this kernel reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.contiguous()
        M, N = x.shape
        values = torch.empty(M, dtype=x.dtype, device=x.device)
        indices = torch.empty(M, dtype=torch.int64, device=x.device)
        max_with_index_kernel[(M,)](x, values, indices, N, BLOCK=128)
        return values, indices
