"""The activation chain in Triton, one small kernel per step (scale, shift, tanh, square, scale, residual,
clamp), each writing its result to a temporary for the next."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) * tl.load(b_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


@triton.jit
def tanh_kernel(a_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 2.0 / (1.0 + tl.exp(-2.0 * a)) - 1.0, mask=mask)


@triton.jit
def clamp_kernel(a_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(tl.load(a_ptr + offs, mask=mask), lo), hi), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.s = nn.Parameter(torch.rand(n) + 0.5)
        self.b = nn.Parameter(torch.randn(n) * 0.1)
        self.c = nn.Parameter(torch.rand(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        t = [torch.empty_like(x) for _ in range(7)]
        mul_kernel[grid](x, self.s, t[0], n, BLOCK=BLOCK, num_warps=4)
        add_kernel[grid](t[0], self.b, t[1], n, BLOCK=BLOCK, num_warps=4)
        tanh_kernel[grid](t[1], t[2], n, BLOCK=BLOCK, num_warps=4)
        mul_kernel[grid](t[2], t[2], t[3], n, BLOCK=BLOCK, num_warps=4)
        mul_kernel[grid](t[3], self.c, t[4], n, BLOCK=BLOCK, num_warps=4)
        add_kernel[grid](t[4], x, t[5], n, BLOCK=BLOCK, num_warps=4)
        clamp_kernel[grid](t[5], t[6], n, -1.0, 1.0, BLOCK=BLOCK, num_warps=4)
        return t[6]
