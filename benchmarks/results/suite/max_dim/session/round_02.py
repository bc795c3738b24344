"""Initial Triton candidate for max_dim: one row per program, looping over the row in BLOCK_SIZE chunks."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
        acc = tl.maximum(acc, x)
    tl.store(y_ptr + row, tl.max(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this candidate reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows,), dtype=x.dtype, device=x.device)
        BLOCK_SIZE = 1024
        max_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=2)
        return y
