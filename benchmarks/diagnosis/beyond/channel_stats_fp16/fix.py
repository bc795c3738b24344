"""Per-channel statistics in Triton: 64 channels times a chunk of rows per program, then a pass over the partials."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def channel_part_kernel(x_ptr, part_ptr, R, C, ROWS_PER: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_c = tl.program_id(0)
    pid_r = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < C
    s = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    ss = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(pid_r * ROWS_PER, pid_r * ROWS_PER + ROWS_PER, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < R) & cmask[None, :]
        v = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=m, other=0.0).to(tl.float32)
        s += v
        ss += v * v
    tl.store(part_ptr + pid_r * 2 * C + cols, tl.sum(s, axis=0), mask=cmask)
    tl.store(part_ptr + pid_r * 2 * C + C + cols, tl.sum(ss, axis=0), mask=cmask)


@triton.jit
def channel_finish_kernel(part_ptr, out_ptr, R, C, eps, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < C
    s = tl.zeros([BLOCK], dtype=tl.float32)
    ss = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(SPLIT):
        s += tl.load(part_ptr + i * 2 * C + cols, mask=mask, other=0.0)
        ss += tl.load(part_ptr + i * 2 * C + C + cols, mask=mask, other=0.0)
    mean = s / R
    var = ss / R - mean * mean
    tl.store(out_ptr + cols, mean, mask=mask)
    tl.store(out_ptr + C + cols, 1.0 / tl.sqrt(var + eps), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        R, C = x.shape
        split = 8
        rows_per = triton.cdiv(triton.cdiv(R, split), 32) * 32
        part = torch.empty((split, 2, C), device=x.device, dtype=torch.float32)
        out = torch.empty((2, C), device=x.device, dtype=torch.float32)
        channel_part_kernel[(triton.cdiv(C, 64), split)](x, part, R, C, ROWS_PER=rows_per, BLOCK_R=32, BLOCK_C=64,
                                                          num_warps=4)
        channel_finish_kernel[(triton.cdiv(C, 1024),)](part, out, R, C, 1e-5, SPLIT=split, BLOCK=1024, num_warps=4)
        return out
