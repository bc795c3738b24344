"""Row argmax in Triton: each program reduces BLOCK_M rows at once (2-D tile, argmax along axis 1)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    rmask = rows < M
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rmask[:, None] & (cols[None, :] < N),
                other=-float("inf"))
    tl.store(out_ptr + rows, tl.argmax(x, axis=1).to(tl.int64), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty(M, dtype=torch.int64, device=x.device)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, 4096 // BLOCK_N)
        argmax_kernel[(triton.cdiv(M, BLOCK_M),)](x, out, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        return out
