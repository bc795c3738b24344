"""Initial Triton candidate for cumsum_reverse: one row per program, whole row in one block, read back to front."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_reverse_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr):
    row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    row_tile_ok = row < n_rows_rpp
    cols = tl.arange(0, BLOCK_SIZE)[None, :]
    mask = cols < n_cols
    rev = n_cols - 1 - cols
    x = tl.load(x_ptr + row * row_stride + rev, mask=(mask) & row_tile_ok, other=0.0)
    y = tl.cumsum(x, axis=1)
    tl.store(y_ptr + row * row_stride + rev, y, mask=(mask) & row_tile_ok)


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
        ROWS_PER_PROGRAM = 4
        cumsum_reverse_kernel[(triton.cdiv(n_rows, ROWS_PER_PROGRAM),)](x, y, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=4, n_rows_rpp=n_rows, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM)
        return y
