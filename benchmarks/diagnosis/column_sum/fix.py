"""Column sums in Triton, two stages: a (column block, row split) grid where each program accumulates its
rows for BLOCK_N columns in registers and writes one partial row; a second kernel adds the SPLIT partials."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_column_sum_kernel(x_ptr, partial_ptr, M, N, rows_per_split,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    split = tl.program_id(1)
    cmask = cols < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    row_end = tl.minimum(M, (split + 1) * rows_per_split)
    for r0 in range(split * rows_per_split, row_end, BLOCK_M):
        rows = r0 + tl.arange(0, BLOCK_M)
        acc += tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=(rows[:, None] < row_end) & cmask[None, :],
                       other=0.0).to(tl.float32)
    tl.store(partial_ptr + split * N + cols, tl.sum(acc, axis=0), mask=cmask)


@triton.jit
def sum_splits_kernel(partial_ptr, out_ptr, SPLIT, N, BLOCK_S: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for s0 in range(0, SPLIT, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        acc += tl.sum(tl.load(partial_ptr + s[:, None] * N + cols[None, :],
                              mask=(s[:, None] < SPLIT) & (cols[None, :] < N), other=0.0), axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        BLOCK_M, BLOCK_N = 32, 128
        n_col_blocks = triton.cdiv(N, BLOCK_N)
        SPLIT = max(1, min(triton.cdiv(M, BLOCK_M), 512 // n_col_blocks))
        rows_per_split = triton.cdiv(triton.cdiv(M, SPLIT), BLOCK_M) * BLOCK_M
        SPLIT = triton.cdiv(M, rows_per_split)
        partial = torch.empty((SPLIT, N), dtype=torch.float32, device=x.device)
        out = torch.empty(N, dtype=torch.float32, device=x.device)
        partial_column_sum_kernel[(n_col_blocks, SPLIT)](x, partial, M, N, rows_per_split,
                                                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        sum_splits_kernel[(n_col_blocks,)](partial, out, SPLIT, N, BLOCK_S=32, BLOCK_N=BLOCK_N, num_warps=4)
        return out
