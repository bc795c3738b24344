"""A sum over a matrix with a 2-D grid of [BM, BN] tiles, each tile adding its total into out[1] (a bias at out[0])."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def tile_sum_kernel(x_ptr, out_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    tl.atomic_add(out_ptr + 1, tl.sum(tl.sum(x, axis=1), axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        M, N = x.shape
        out = torch.ones(2, dtype=torch.float32)  # out[1] starts at 1: the second stage must add, not overwrite
        tile_sum_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 32))](x, out, M, N, x.stride(0), BM=16, BN=32)
        return out


CASES = [{"m": 50, "n": 70}]


def get_inputs(m=50, n=70):
    return [torch.randn(m, n)]
