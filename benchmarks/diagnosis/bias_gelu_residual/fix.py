"""gelu(x + bias) + residual in Triton as one fused kernel: x and the residual are read once, the result is
written once, and the fp32 intermediates stay in registers."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_gelu_residual_kernel(x_ptr, b_ptr, r_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    mask = (rows[:, None] < M) & cmask[None, :]
    offs = rows[:, None] * N + cols[None, :]
    b = tl.load(b_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32) + b[None, :]
    t = 2.0 / (1.0 + tl.exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x))) - 1.0
    h = 0.5 * x * (1.0 + t)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (h + r).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        BLOCK_M, BLOCK_N = 8, 512
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        bias_gelu_residual_kernel[grid](x, self.bias, residual, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                        num_warps=8)
        return out
