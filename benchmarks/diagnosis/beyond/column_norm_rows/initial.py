"""Standardisation in Triton: each program handles 8 rows in turn, reading the column statistics as it goes."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def standardize_kernel(x_ptr, mean_ptr, var_ptr, y_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    for r in range(ROWS):
        row = pid * ROWS + r
        m = cmask & (row * N + cols < M * N)
        x = tl.load(x_ptr + row * N + cols, mask=m, other=0.0).to(tl.float32)
        mu = tl.load(mean_ptr + cols, mask=cmask, other=0.0)
        inv = 1.0 / tl.sqrt(tl.load(var_ptr + cols, mask=cmask, other=1.0) + eps)
        tl.store(y_ptr + row * N + cols, ((x - mu) * inv).to(tl.float16), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        standardize_kernel[(triton.cdiv(M, 8),)](x, mean, var, y, M, N, 1e-5, ROWS=8,
                                                 BLOCK_N=triton.next_power_of_2(N), num_warps=4)
        return y
