"""Golden kernel: an fp32 GEMM tile whose K loop feeds tl.dot with a constexpr input precision."""

import triton
import triton.language as tl


@triton.jit
def dot_f32(A, B, C, K, stride_am, stride_bk, stride_cm,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(A + rm[:, None] * stride_am + (k + rk)[None, :])
        b = tl.load(B + (k + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b, input_precision=PRECISION)
    tl.store(C + rm[:, None] * stride_cm + rn[None, :], acc)
