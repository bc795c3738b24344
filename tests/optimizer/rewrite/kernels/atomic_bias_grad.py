"""A bias gradient: each program sums a [ROWS, BLOCK_N] tile of the upstream gradient over its rows and adds the
column sums into db (which already holds a value: the update keeps it)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def bias_grad_kernel(g_ptr, db_ptr, M, N, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(axis=0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    offs_n = tl.arange(0, BLOCK_N)
    col_ok = offs_n < N
    tile = tl.load(g_ptr + rows[:, None] * N + offs_n[None, :], mask=(rows[:, None] < M) & col_ok[None, :], other=0.0)
    part = tl.sum(tile.to(tl.float32), axis=0)
    tl.atomic_add(db_ptr + offs_n, part, mask=col_ok)


class ModelNew(nn.Module):
    def forward(self, g):
        M, N = g.shape
        db = torch.ones(N, dtype=torch.float32)
        grid = (triton.cdiv(M, 8),)
        bias_grad_kernel[grid](g, db, M, N, ROWS=8, BLOCK_N=triton.next_power_of_2(N))
        return db


CASES = [{"m": 1000, "n": 48}, {"m": 9, "n": 130}]


def get_inputs(m=1000, n=48):
    return [torch.randn(m, n)]
