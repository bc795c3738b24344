"""MSE loss in Triton: each program squares a small slice of differences and atomically adds its share."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mse_kernel(p_ptr, t_ptr, out_ptr, n, inv_n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(d * d, axis=0) * inv_n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        n = pred.numel()
        out = torch.zeros((), dtype=torch.float32, device=pred.device)
        BLOCK = 256
        mse_kernel[(triton.cdiv(n, BLOCK),)](pred, target, out, n, 1.0 / n, BLOCK=BLOCK, num_warps=4)
        return out
