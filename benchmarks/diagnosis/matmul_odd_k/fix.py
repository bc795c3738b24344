"""bf16 matmul in Triton with true alignment hints: K, N and the strides are multiples of ALIGN (computed at
launch), so the row-start products and the bound checks are declared and the tiles load with vector and
asynchronous copies again."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _align(*sizes: int) -> int:
    """The largest of 8, 4, 2, 1 that divides every size."""
    return next(a for a in (8, 4, 2, 1) if all(s % a == 0 for s in sizes))


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ALIGN: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    n_ok = tl.max_constancy(offs_n[None, :] < N, [1, ALIGN])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(a_ptr + tl.multiple_of(offs_m[:, None] * stride_am, [ALIGN, ALIGN]) + k[None, :],
                    mask=(offs_m[:, None] < M) & tl.max_constancy(k[None, :] < K, [1, ALIGN]), other=0.0)
        b = tl.load(b_ptr + tl.multiple_of(k[:, None] * stride_bk, [ALIGN, ALIGN]) + offs_n[None, :],
                    mask=(k[:, None] < K) & n_ok, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + tl.multiple_of(offs_m[:, None] * stride_cm, [ALIGN, ALIGN]) + offs_n[None, :],
             acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & n_ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        matmul_kernel[grid](A, B, C, M, N, K, A.stride(0), B.stride(0), C.stride(0),
                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, ALIGN=_align(K, N),
                            num_warps=8, num_stages=3)
        return C
