"""Initial Triton candidate for sum_dim: one (batch, column block) per program, looping over the reduced dim."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, y_ptr, D1, D2, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0)
    pid_c = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < D2
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r0 in range(0, D1, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < D1) & col_mask[None, :]
        acc += tl.load(x_ptr + b * D1 * D2 + rows[:, None] * D2 + cols[None, :], mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + b * D2 + cols, total, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        assert dim == 1, "this candidate reduces the middle dimension of a 3-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, D1, D2 = x.shape
        y = torch.empty((B, 1, D2), dtype=x.dtype, device=x.device)
        BLOCK_R, BLOCK_C = 32, 128
        grid = (B, triton.cdiv(D2, BLOCK_C))
        sum_dim1_kernel[grid](x, y, D1, D2, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, num_warps=2)
        return y
