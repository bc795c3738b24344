"""alpha * x in Triton: 4096 elements per program on 8 warps, 128-bit loads and stores."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 4096
        scale_kernel[(triton.cdiv(n, BLOCK),)](x, y, self.alpha, n, BLOCK=BLOCK, num_warps=8)
        return y
