"""Naive first translation of sum_dim: one (batch, 64-column chunk) per program, adding up the reduced
dimension four rows at a time."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, y_ptr, D1, D2, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rows = tl.arange(0, 4)
    acc = tl.zeros((4, BLOCK), dtype=tl.float32)
    for r0 in range(0, D1, 4):
        mask = (r0 + rows[:, None] < D1) & (cols[None, :] < D2)
        acc += tl.load(x_ptr + b * D1 * D2 + (r0 + rows[:, None]) * D2 + cols[None, :], mask=mask, other=0.0)
    tl.store(y_ptr + b * D2 + cols, tl.sum(acc, axis=0), mask=cols < D2)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        assert dim == 1, "this kernel reduces the middle dimension of a 3-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, 1, D2), dtype=x.dtype, device=x.device)
        sum_dim1_kernel[(B, triton.cdiv(D2, 64))](x, y, D1, D2, BLOCK=64)
        return y
