"""RMSNorm in Triton: one program per row; every launch uses the largest supported width (8192) as its block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * N + cols, (x * rstd * w).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int = 96):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(N).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        rmsnorm_kernel[(M,)](x, self.weight, y, N, 1e-6, BLOCK_N=8192, num_warps=8)
        return y
