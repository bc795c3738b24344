"""Gain in Triton: each program scales 16 consecutive rows, the gain computed once per program."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gain_kernel(x_ptr, g_ptr, y_ptr, M, N, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    gain = tl.exp(tl.load(g_ptr + cols, mask=cmask, other=0.0))
    for r in range(ROWS):
        row = pid * ROWS + r
        m = cmask & (row * N + cols < M * N)
        x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0)
        tl.store(y_ptr + row * N + cols, x * gain, mask=m)


class ModelNew(nn.Module):
    def __init__(self, N: int = 64):
        super().__init__()
        self.log_gain = nn.Parameter(0.1 * torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        gain_kernel[(triton.cdiv(M, 16),)](x, self.log_gain, y, M, N, ROWS=16, BLOCK_N=triton.next_power_of_2(N),
                                           num_warps=4)
        return y
