"""relu(x + bias) in Triton with true alignment hints: N is a multiple of ALIGN (computed at launch), so row
starts and the column bound are declared multiples of ALIGN and the loads and stores vectorize."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _align(*sizes: int) -> int:
    """The largest of 8, 4, 2, 1 that divides every size."""
    return next(a for a in (8, 4, 2, 1) if all(s % a == 0 for s in sizes))


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, y_ptr, N, BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = tl.max_constancy(cols < N, ALIGN)
    start = tl.multiple_of(row * N, ALIGN)
    x = tl.load(x_ptr + start + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + start + cols, tl.maximum(x + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK = 1024
        bias_relu_kernel[(M, triton.cdiv(N, BLOCK))](x, self.bias, y, N, BLOCK=BLOCK, ALIGN=_align(N), num_warps=4)
        return y
