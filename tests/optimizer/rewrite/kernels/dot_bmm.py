"""A batched fp32 matmul: program axis 2 is the batch, two dots accumulate a split K, ieee precision."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, HALF_K: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    batch = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, HALF_K)
    a_base = a_ptr + batch * M * 2 * HALF_K
    b_base = b_ptr + batch * 2 * HALF_K * N
    a0 = tl.load(a_base + rm[:, None] * 2 * HALF_K + rk[None, :], mask=rm[:, None] < M, other=0.0)
    a1 = tl.load(a_base + rm[:, None] * 2 * HALF_K + HALF_K + rk[None, :], mask=rm[:, None] < M, other=0.0)
    b0 = tl.load(b_base + rk[:, None] * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
    b1 = tl.load(b_base + (HALF_K + rk[:, None]) * N + rn[None, :], mask=rn[None, :] < N, other=0.0)
    acc = tl.dot(a0, b0, input_precision="ieee")
    acc = tl.dot(a1, b1, acc, input_precision="ieee")
    tl.store(c_ptr + batch * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        B, M, K = a.shape
        N = b.shape[2]
        c = torch.empty((B, M, N), dtype=torch.float32)
        bmm_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16), B)](a, b, c, M, N, HALF_K=K // 2, BM=16, BN=16)
        return c


CASES = [{"b": 3, "m": 20, "n": 24}]


def get_inputs(b=3, m=20, n=24):
    return [torch.randn(b, m, 32), torch.randn(b, 32, n)]
