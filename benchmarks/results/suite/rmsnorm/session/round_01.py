"""Initial Triton candidate for rmsnorm: one row per program, the whole row in one block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, eps, BLOCK_SIZE: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr):
    row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    row_tile_ok = row < n_rows_rpp
    cols = tl.arange(0, BLOCK_SIZE)[None, :]
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=(mask) & row_tile_ok, other=0.0).to(tl.float32)
    mean_sq = tl.sum(x * x, axis=1, keep_dims=True) / n_cols
    rstd = 1.0 / tl.sqrt(mean_sq + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=(mask) & row_tile_ok)


class ModelNew(nn.Module):
    def __init__(self, N: int, dtype: str = "float32", eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        ROWS_PER_PROGRAM = 2
        rmsnorm_kernel[(triton.cdiv(n_rows, ROWS_PER_PROGRAM),)](
            x, self.weight, y, n_cols, x.stride(0), y.stride(0), self.eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=4, n_rows_rpp=n_rows, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM
        )
        return y
