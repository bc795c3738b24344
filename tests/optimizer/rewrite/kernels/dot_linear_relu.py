"""A linear layer y = relu(x @ w.T + bias) whose grid puts the N tiles on axis 0 and the M tiles on axis 1."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def linear_relu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_m = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + offs_m[:, None] * K + k0 + offs_k[None, :],
                    mask=(offs_m[:, None] < M) & (k0 + offs_k[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[None, :] * K + k0 + offs_k[:, None],
                    mask=(offs_n[None, :] < N) & (k0 + offs_k[:, None] < K), other=0.0)
        acc += tl.dot(x, w)
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    y = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(y_ptr + offs_m[:, None] * N + offs_n[None, :], y, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, x, w, bias):
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), dtype=torch.float32)
        linear_relu_kernel[(triton.cdiv(N, 16), triton.cdiv(M, 64))](
            x, w, bias, y, M, N, K, BLOCK_M=64, BLOCK_N=16, BLOCK_K=32, num_warps=2, num_stages=2,
        )
        return y


CASES = [{"m": 70, "n": 40, "k": 45}]


def get_inputs(m=70, n=40, k=45):
    return [torch.randn(m, k), torch.randn(n, k), torch.randn(n)]
