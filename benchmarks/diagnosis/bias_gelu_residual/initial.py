"""gelu(x + bias) + residual in Triton, one simple kernel per step: add the bias, apply GELU, add the residual."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_bias_kernel(x_ptr, b_ptr, out_ptr, n, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs % N, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, x + b, mask=mask)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = 2.0 / (1.0 + tl.exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x))) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


@triton.jit
def add_residual_kernel(h_ptr, r_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = tl.load(h_ptr + offs, mask=mask, other=0.0)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (h + r).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x, residual = x.contiguous(), residual.contiguous()
        n, N = x.numel(), x.shape[-1]
        t1 = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        t2 = torch.empty_like(t1)
        out = torch.empty_like(x)
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        add_bias_kernel[grid](x, self.bias, t1, n, N, BLOCK=BLOCK, num_warps=4)
        gelu_kernel[grid](t1, t2, n, BLOCK=BLOCK, num_warps=4)
        add_residual_kernel[grid](t2, residual, out, n, BLOCK=BLOCK, num_warps=4)
        return out
