"""dot_tensor_descriptor example: an fp16 matmul with a Hopper tile whose operand tiles are pointer-arithmetic loads."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "dot_tensor_descriptor", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-1, "rtol": 1e-2}


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, USE_TMA: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if USE_TMA:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k]) if USE_TMA else tl.load(a_ptrs, mask=(rm[:, None] < M) & (k + rk[None, :] < K), other=0.0)
        b = b_desc.load([k, pid_n * BLOCK_N]) if USE_TMA else tl.load(b_ptrs, mask=(k + rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    if USE_TMA:
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))
    else:
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def _ladder_tma_ok(*byte_values):
    """Tensor descriptors (TMA) need 16-byte aligned bases and strides: True when every value is a multiple of 16."""
    return all(int(v) % 16 == 0 for v in byte_values)


def _ladder_tma_scratch(size, alignment, stream):
    """Global scratch for device-side tensor descriptors (Triton >= 3.4 asks for it at launch)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


class ModelNew(nn.Module):
    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=torch.float16, device=a.device)
        grid = (triton.cdiv(M, 128), triton.cdiv(N, 256))
        if hasattr(triton, "set_allocator"):
            triton.set_allocator(_ladder_tma_scratch)
        mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=3, USE_TMA=_ladder_tma_ok(a.data_ptr(), K * a.element_size(), b.data_ptr(), N * b.element_size(), c.data_ptr(), N * c.element_size()))
        return c


def get_inputs(device="cuda"):
    return [torch.randn(8192, 8192, device=device, dtype=torch.float16),
            torch.randn(8192, 8192, device=device, dtype=torch.float16)]


def reference(a, b):
    return a @ b
