"""Naive first translation of min_dim: one (batch, 32-column chunk) per program, an 8 x 32 tile of the reduced
dimension at a time."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def min_dim1_kernel(x_ptr, y_ptr, D1, D2, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    best = tl.full((BLOCK_C,), float("inf"), dtype=tl.float32)
    for r0 in range(0, D1, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < D1) & (cols[None, :] < D2)
        x = tl.load(x_ptr + b * D1 * D2 + rows[:, None] * D2 + cols[None, :], mask=mask, other=float("inf"))
        best = tl.minimum(best, tl.min(x, axis=0))
    tl.store(y_ptr + b * D2 + cols, best, mask=cols < D2)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        assert dim == 1, "this kernel reduces the middle dimension of a 3-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, D2), dtype=x.dtype, device=x.device)
        min_dim1_kernel[(B, triton.cdiv(D2, 32))](x, y, D1, D2, BLOCK_R=8, BLOCK_C=32)
        return y
