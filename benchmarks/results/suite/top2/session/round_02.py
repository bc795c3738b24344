"""Initial Triton candidate for top2: one row per program; max and argmax, mask the winner, max again."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def top2_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=float("-inf"))
    first = tl.max(x, axis=0)
    first_idx = tl.argmax(x, axis=0)
    rest = tl.where(cols == first_idx, float("-inf"), x)
    second = tl.max(rest, axis=0)
    tl.store(y_ptr + row * 2, first)
    tl.store(y_ptr + row * 2 + 1, second)


class ModelNew(nn.Module):
    def __init__(self, k: int = 2):
        super().__init__()
        assert k == 2, "this candidate computes the top-2 only"
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty((n_rows, 2), dtype=x.dtype, device=x.device)
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        top2_kernel[(n_rows,)](x, y, n_cols, x.stride(0), BLOCK_SIZE=BLOCK_SIZE, num_warps=2)
        return y
