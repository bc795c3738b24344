"""Initial Triton candidate for argmax: one row per program, the whole row in one block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
    idx = tl.argmax(x, axis=0)
    tl.store(y_ptr + row, idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this candidate reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows,), dtype=torch.int64, device=x.device)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        argmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=8)
        return y
