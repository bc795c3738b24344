"""Per-channel statistics in Triton: each program owns 64 channels and walks every row once."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def channel_stats_kernel(x_ptr, out_ptr, R, C, eps, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    s = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    ss = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < R) & cmask[None, :]
        v = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=m, other=0.0).to(tl.float32)
        s += v
        ss += v * v
    mean = tl.sum(s, axis=0) / R
    var = tl.sum(ss, axis=0) / R - mean * mean
    tl.store(out_ptr + cols, mean, mask=cmask)
    tl.store(out_ptr + C + cols, 1.0 / tl.sqrt(var + eps), mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        R, C = x.shape
        out = torch.empty((2, C), device=x.device, dtype=torch.float32)
        channel_stats_kernel[(triton.cdiv(C, 64),)](x, out, R, C, 1e-5, BLOCK_R=32, BLOCK_C=64, num_warps=4)
        return out
