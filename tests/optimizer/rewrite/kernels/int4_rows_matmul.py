"""A W4A16 matmul whose int4 weights are packed eight per int32 along K, loaded at row index offs_k // 8."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def w4_matmul_kernel(a_ptr, qw_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_qk, stride_cm,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[M, N] = A[M, K] @ ((unpacked QW[K, N] - 8) * scale[N])."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    q_ptrs = qw_ptr + (offs_k[:, None] // 8) * stride_qk + offs_n[None, :]
    shift = (offs_k % 8) * 4
    scale = tl.load(scale_ptr + offs_n)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K // BK):
        a = tl.load(a_ptrs)
        q = tl.load(q_ptrs)
        w = ((q >> shift[:, None]) & 0xF) - 8
        acc += tl.dot(a, (w.to(tl.float32) * scale[None, :]).to(tl.float16))
        a_ptrs += BK
        q_ptrs += (BK // 8) * stride_qk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc.to(tl.float16))


class ModelNew(nn.Module):
    def forward(self, a, qw, scale):
        M, K = a.shape
        N = qw.shape[1]
        c = torch.empty((M, N), dtype=torch.float16, device=a.device)
        w4_matmul_kernel[(M // 16, N // 32)](a, qw, scale, c, M, N, K, a.stride(0), qw.stride(0), c.stride(0),
                                             BM=16, BN=32, BK=64)
        return c


CASES = [{"M": 32, "N": 64, "K": 128}, {"M": 16, "N": 32, "K": 64}]


def get_inputs(M=32, N=64, K=128):
    g = torch.Generator().manual_seed(0)
    nib = torch.randint(0, 16, (K // 8, 8, N), generator=g, dtype=torch.int64)
    packed = (nib << (4 * torch.arange(8).view(1, 8, 1))).sum(1)
    qw = torch.where(packed >= 2**31, packed - 2**32, packed).to(torch.int32)
    return [torch.randn(M, K, generator=g).half(), qw, (torch.rand(N, generator=g) * 0.1).half()]
