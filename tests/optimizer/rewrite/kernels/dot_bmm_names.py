"""A batched matmul on a 3-D grid (axis 2 is the batch) whose tiles are host names bound to literals."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bat = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + bat * M * K + rm[:, None] * K + k0 + rk[None, :],
                    mask=(rm[:, None] < M) & (k0 + rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + bat * K * N + (k0 + rk[:, None]) * N + rn[None, :],
                    mask=(k0 + rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + bat * M * N + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        B, M, K = a.shape
        N = b.shape[2]
        c = torch.empty((B, M, N), dtype=torch.float32)
        BM, BN, BK = 32, 32, 32
        bmm_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN), B)](a, b, c, M, N, K, BM=BM, BN=BN, BK=BK, num_warps=4)
        return c


CASES = [{"b": 2, "m": 40, "n": 36, "k": 50}]


def get_inputs(b=2, m=40, n=36, k=50):
    return [torch.randn(b, m, k), torch.randn(b, k, n)]
