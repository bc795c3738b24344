"""A matmul on a 1-D program id split by // and %, its tiles host variables the launcher computes the grid from."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def mm1d_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def mm(a, b):
    M, K = a.shape
    N = b.shape[1]
    block_m = 32
    block_n = 32
    block_k = 32
    num_warps = 4
    c = torch.empty((M, N), dtype=torch.float32)
    programs = triton.cdiv(M, block_m) * triton.cdiv(N, block_n)
    grid = (programs,)
    mm1d_kernel[grid](a, b, c, M, N, K, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, num_warps=num_warps)
    return c


class ModelNew(nn.Module):
    def forward(self, a, b):
        return mm(a, b)


CASES = [{"m": 40, "n": 50, "k": 70}]


def get_inputs(m=40, n=50, k=70):
    return [torch.randn(m, k), torch.randn(k, n)]
