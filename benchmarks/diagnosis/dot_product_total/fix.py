"""Inner product in Triton: every program stores the dot product of its 16384-element slice into a buffer
(32x fewer partial sums for the one-program second pass), then a second kernel sums the buffer in order."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def slice_dot_kernel(x_ptr, y_ptr, part_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(part_ptr + tl.program_id(0), tl.sum(x * y, axis=0))


@triton.jit
def total_kernel(part_ptr, out_ptr, n_parts, BLOCK: tl.constexpr):
    acc = 0.0
    for i in range(0, n_parts, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0), axis=0)
    tl.store(out_ptr, acc)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x, y = x.contiguous(), y.contiguous()
        n = x.numel()
        BLOCK = 16384
        n_parts = triton.cdiv(n, BLOCK)
        parts = torch.empty(n_parts, dtype=torch.float32, device=x.device)
        out = torch.empty((), dtype=torch.float32, device=x.device)
        slice_dot_kernel[(n_parts,)](x, y, parts, n, BLOCK=BLOCK, num_warps=8)
        total_kernel[(1,)](parts, out, n_parts, BLOCK=512, num_warps=4)
        return out
