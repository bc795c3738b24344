"""Initial Triton candidate for max_with_index: one row per program, the whole row in one block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def max_with_index_kernel(x_ptr, val_ptr, idx_ptr, n_cols, x_row_stride, BLOCK_SIZE: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr):
    row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    row_tile_ok = row < n_rows_rpp
    cols = tl.arange(0, BLOCK_SIZE)[None, :]
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=(cols < n_cols) & row_tile_ok, other=float("-inf"))
    value, index = tl.max(x, axis=1, keep_dims=True, return_indices=True)
    tl.store(val_ptr + row, value, mask=row_tile_ok)
    tl.store(idx_ptr + row, index.to(tl.int64), mask=row_tile_ok)


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this candidate reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        values = torch.empty((n_rows,), dtype=x.dtype, device=x.device)
        indices = torch.empty((n_rows,), dtype=torch.int64, device=x.device)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        ROWS_PER_PROGRAM = 2
        max_with_index_kernel[(triton.cdiv(n_rows, ROWS_PER_PROGRAM),)](x, values, indices, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=4, n_rows_rpp=n_rows, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM)
        return values, indices
