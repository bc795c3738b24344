"""A batched matmul with one shared BLOCK, pointer tiles built before the K loop and advanced inside it."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def bmm_shared_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    bat = tl.program_id(2)
    offs_m = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    offs_k = tl.arange(0, BLOCK)
    a_ptrs = a_ptr + bat * M * K + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + bat * K * N + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k0 in range(0, K, BLOCK):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] + k0 < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] + k0 < K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK
        b_ptrs += BLOCK * N
    tl.store(c_ptr + bat * M * N + offs_m[:, None] * N + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        B, M, K = a.shape
        N = b.shape[2]
        c = torch.empty((B, M, N), dtype=torch.float32)
        bmm_shared_kernel[(triton.cdiv(M, 16), triton.cdiv(N, 16), B)](a, b, c, M, N, K, BLOCK=16)
        return c


CASES = [{"B": 2, "M": 20, "N": 36, "K": 40}]


def get_inputs(B=2, M=20, N=36, K=40):
    return [torch.randn(B, M, K), torch.randn(B, K, N)]
