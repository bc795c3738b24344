"""Per-channel affine in Triton: each program handles a BLOCK_M x BLOCK_N tile; scale and shift loaded once."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, scale_ptr, shift_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    mask = (rows[:, None] < M) & cmask[None, :]
    offs = rows[:, None] * N + cols[None, :]
    s = tl.load(scale_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    b = tl.load(shift_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x * s[None, :] + b[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(N, dtype=torch.float16) + 0.5)
        self.shift = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK_M, BLOCK_N = 16, 256
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        affine_kernel[grid](x, self.scale, self.shift, y, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        return y
