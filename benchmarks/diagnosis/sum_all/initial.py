"""Full sum in Triton: each program sums a BLOCK slice and adds it to the result with an atomic."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        out = torch.zeros((), dtype=x.dtype, device=x.device)
        BLOCK = 512
        sum_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK, num_warps=4)
        return out
