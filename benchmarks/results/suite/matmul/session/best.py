"""Initial Triton candidate for matmul: a plain tiled matmul, one BLOCK_M x BLOCK_N output tile per program."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _ladder_align(*sizes):
    """Largest of 8, 4, 2 dividing every size (1 if none): the ALIGN hint of the kernels below."""
    for g in (8, 4, 2):
        if all(int(s) % g == 0 for s in sizes):
            return g
    return 1


@triton.autotune(
    configs=[
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 256, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 64}, num_warps=8, num_stages=3),
        triton.Config({'BLOCK_M': 128, 'BLOCK_N': 128, 'BLOCK_K': 32}, num_warps=4, num_stages=4),
        triton.Config({'BLOCK_M': 64, 'BLOCK_N': 256, 'BLOCK_K': 32}, num_warps=4, num_stages=4),
    ],
    key=['M', 'N', 'K'],
)
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, ALIGN: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
):
    _pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    _n_m = tl.num_programs(0)
    _in_group = GROUP_SIZE_M * tl.num_programs(1)
    _first_m = (_pid // _in_group) * GROUP_SIZE_M
    _group_m = tl.minimum(_n_m - _first_m, GROUP_SIZE_M)
    pid_m = _first_m + (_pid % _in_group) % _group_m
    pid_n = (_pid % _in_group) // _group_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        a = tl.load(a_ptr + tl.multiple_of(offs_m[:, None] * stride_am, [ALIGN, ALIGN]) + tl.multiple_of(k[None, :] * stride_ak, [ALIGN, ALIGN]),
                    mask=(tl.max_constancy(offs_m[:, None] < M, [ALIGN, 1])) & (tl.max_constancy(k[None, :] < K, [1, ALIGN])), other=0.0)
        b = tl.load(b_ptr + tl.multiple_of(k[:, None] * stride_bk, [ALIGN, ALIGN]) + tl.multiple_of(offs_n[None, :] * stride_bn, [ALIGN, ALIGN]),
                    mask=(tl.max_constancy(k[:, None] < K, [ALIGN, 1])) & (tl.max_constancy(offs_n[None, :] < N, [1, ALIGN])), other=0.0)
        acc += tl.dot(a, b)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + tl.multiple_of(offs_m[:, None] * stride_cm, [ALIGN, ALIGN]) + tl.multiple_of(offs_n[None, :] * stride_cn, [ALIGN, ALIGN]), c,
             mask=(tl.max_constancy(offs_m[:, None] < M, [ALIGN, 1])) & (tl.max_constancy(offs_n[None, :] < N, [1, ALIGN])))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        _, N = B.shape
        C = torch.empty((M, N), dtype=A.dtype, device=A.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))
        matmul_kernel[grid](
            A, B, C, M, N, K,
            A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1), ALIGN=_ladder_align(K, M, N, (8 if A.stride(1) == 1 else A.stride(1)), (8 if A.stride(0) == 1 else A.stride(0)), (8 if B.stride(0) == 1 else B.stride(0)), (8 if B.stride(1) == 1 else B.stride(1)), (8 if C.stride(0) == 1 else C.stride(0)), (8 if C.stride(1) == 1 else C.stride(1)), BLOCK_K, BLOCK_M, BLOCK_N), GROUP_SIZE_M=8,
        )
        return C
