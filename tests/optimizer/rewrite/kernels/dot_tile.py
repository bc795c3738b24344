"""A single-tile fp32 matmul (one program, the whole problem in one [M, K] x [K, N] tile), ieee precision."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def tile_mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
    c = tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=torch.float32)
        tile_mm_kernel[(1,)](a, b, c, M, N, K, BM=32, BN=32, BK=32)
        return c


CASES = [{"m": 20, "n": 30, "k": 17}]


def get_inputs(m=20, n=30, k=17):
    return [torch.randn(m, k), torch.randn(k, n)]
