"""Initial Triton candidate for cumsum_reverse: one row per program, whole row in one block, read back to front."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_reverse_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    rev = n_cols - 1 - cols
    x = tl.load(x_ptr + row * row_stride + rev, mask=mask, other=0.0)
    y = tl.cumsum(x, axis=0)
    tl.store(y_ptr + row * row_stride + rev, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        assert dim in (-1, 1), "this candidate scans the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        cumsum_reverse_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return y
