"""RMSNorm in Triton: each program normalizes BLOCK_M rows (2-D tile), fp32 statistics, bf16 output."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, M, N, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    mask = (rows[:, None] < M) & cmask[None, :]
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    tl.store(y_ptr + offs, (x * rstd[:, None] * w[None, :]).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.rand(N) + 0.5).to(torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, 8192 // BLOCK_N)
        rmsnorm_kernel[(triton.cdiv(M, BLOCK_M),)](x, self.weight, y, M, N, self.eps,
                                                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8)
        return y
