"""The activation chain in Triton as one kernel: every step in registers, one launch, one read of x and the
three parameter vectors, one write."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def activation_chain_kernel(x_ptr, s_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    h = x * tl.load(s_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + offs, mask=mask, other=0.0)
    t = 2.0 / (1.0 + tl.exp(-2.0 * h)) - 1.0
    y = t * t * tl.load(c_ptr + offs, mask=mask, other=0.0) + x
    tl.store(out_ptr + offs, tl.minimum(tl.maximum(y, -1.0), 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.s = nn.Parameter(torch.rand(n) + 0.5)
        self.b = nn.Parameter(torch.randn(n) * 0.1)
        self.c = nn.Parameter(torch.rand(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        out = torch.empty_like(x)
        BLOCK = 1024
        activation_chain_kernel[(triton.cdiv(n, BLOCK),)](x, self.s, self.b, self.c, out, n, BLOCK=BLOCK, num_warps=4)
        return out
