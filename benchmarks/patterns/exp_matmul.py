"""Matmul experiments for the pattern cards: precision, program order, stages, split-K, tensor descriptors."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from common import DEV, measure

# ---------------------------------------------------------------- matmul: precision, grouping, stages, split-K
@triton.jit
def matmul_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptr = A + rm[:, None] * sam + rk[None, :] * sak
    b_ptr = B + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptr, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptr, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptr += BK * sak
        b_ptr += BK * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(C + cm[:, None] * scm + cn[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _mm(a, b, c, bm, bn, bk, group, prec, warps, stages):
    M, K = a.shape
    N = b.shape[1]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=group, PRECISION=prec, num_warps=warps,
                        num_stages=stages)


def exp_matmul_precision(small: bool) -> list[dict]:
    n = 64 if small else 4096
    a = torch.randn(n, n, device=DEV)
    b = torch.randn(n, n, device=DEV)
    ref = a.double() @ b.double()
    c = torch.empty(n, n, device=DEV)
    flops = 2 * n**3
    bm, bn, bk = (32, 32, 16) if small else (128, 128, 32)
    out = []
    for prec in ("ieee", "tf32"):
        out.append(measure("matmul_fp32_precision", prec,
                            lambda prec=prec: _mm(a, b, c, bm, bn, bk, 8, prec, 8 if not small else 4, 3),
                            lambda: c.double(), ref, small, flops=flops, tol=(1e-1, 1e-2)))
    return out


def exp_matmul_grouping_stages(small: bool) -> list[dict]:
    n = 64 if small else 8192
    a = torch.randn(n, n, device=DEV, dtype=torch.float16)
    b = torch.randn(n, n, device=DEV, dtype=torch.float16)
    ref = (a.float() @ b.float())
    c = torch.empty(n, n, device=DEV, dtype=torch.float16)
    flops = 2 * n**3
    bm, bn, bk = (32, 32, 16) if small else (128, 256, 64)
    out = []
    for group, stages in ((1, 3), (8, 3), (8, 1), (8, 4)):
        out.append(measure("matmul_fp16_group_stages", f"GROUP_M={group},num_stages={stages}",
                            lambda g=group, s=stages: _mm(a, b, c, bm, bn, bk, g, "tf32", 8 if not small else 4, s),
                            lambda: c.float(), ref, small, flops=flops, tol=(1.0, 2e-2)))
    return out


@triton.jit
def matmul_splitk_kernel(A, B, C, M, N, K, sam, sak, sbk, sbn, scm, scn,
                         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    num_n = tl.cdiv(N, BN)
    pid_m = pid // num_n
    pid_n = pid % num_n
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = pid_k * BK + tl.arange(0, BK)
    a_ptr = A + rm[:, None] * sam + rk[None, :] * sak
    b_ptr = B + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK * SPLIT_K)):
        kk = K - k * BK * SPLIT_K
        a = tl.load(a_ptr, mask=rk[None, :] < kk, other=0.0)
        b = tl.load(b_ptr, mask=rk[:, None] < kk, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptr += BK * SPLIT_K * sak
        b_ptr += BK * SPLIT_K * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    cp = C + cm[:, None] * scm + cn[None, :] * scn
    cmask = (cm[:, None] < M) & (cn[None, :] < N)
    if SPLIT_K == 1:
        tl.store(cp, acc, mask=cmask)
    else:
        tl.atomic_add(cp, acc, mask=cmask)


def exp_splitk(small: bool) -> list[dict]:
    M, N, K = (32, 32, 256) if small else (256, 256, 65536)
    a = torch.randn(M, K, device=DEV, dtype=torch.float16)
    b = torch.randn(K, N, device=DEV, dtype=torch.float16)
    ref = a.float() @ b.float()
    c = torch.zeros(M, N, device=DEV, dtype=torch.float32)
    bm, bn, bk = (32, 32, 32) if small else (128, 128, 64)
    out = []
    for sk in (1, 4, 16):
        def run(sk=sk):
            if sk > 1:
                c.zero_()
            grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), sk)
            matmul_splitk_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, SPLIT_K=sk,
                                       num_warps=4 if small else 8, num_stages=3)
        out.append(measure("matmul_splitk_skinny", f"SPLIT_K={sk}", run, lambda: c, ref, small,
                            flops=2 * M * N * K, tol=(1.0, 1e-2)))
    return out


# ---------------------------------------------------------------- matmul: pointer loads vs tensor descriptors (TMA)
@triton.jit
def matmul_desc_kernel(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                       GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % group) % size_m)
    pid_n = (pid % group) // size_m
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def exp_matmul_descriptors(small: bool) -> list[dict]:
    from triton.tools.tensor_descriptor import TensorDescriptor

    n = 128 if small else 8192
    a = torch.randn(n, n, device=DEV, dtype=torch.float16)
    b = torch.randn(n, n, device=DEV, dtype=torch.float16)
    ref = a.float() @ b.float()
    c = torch.empty(n, n, device=DEV, dtype=torch.float16)
    bm, bn, bk = (64, 64, 32) if small else (128, 256, 64)
    grid = (triton.cdiv(n, bm) * triton.cdiv(n, bn),)

    def run_desc():
        ad = TensorDescriptor.from_tensor(a, [bm, bk])
        bd = TensorDescriptor.from_tensor(b, [bk, bn])
        cd = TensorDescriptor.from_tensor(c, [bm, bn])
        matmul_desc_kernel[grid](ad, bd, cd, n, n, n, BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=8, num_stages=3)

    return [
        measure("matmul_fp16_loads", "pointer_loads", lambda: _mm(a, b, c, bm, bn, bk, 8, "tf32", 8, 3),
                 lambda: c.float(), ref, small, flops=2 * n**3, tol=(1.0, 2e-2)),
        measure("matmul_fp16_loads", "tensor_descriptor", run_desc, lambda: c.float(), ref, small, flops=2 * n**3,
                 tol=(1.0, 2e-2)),
    ]

