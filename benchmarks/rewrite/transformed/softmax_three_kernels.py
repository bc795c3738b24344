"""kernel_chain_fusion example: naive softmax as three kernels over the same rows (row max, row sum of exp,
normalize), passing the per-row max and sum through global buffers (benchmarks/suite/softmax/naive.py)."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "kernel_chain_fusion", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-5, "rtol": 1e-4}

@triton.jit
def fused_row_max_row_sum_exp_normalize_kernel(x_ptr, n_cols, y_ptr, BLOCK: tl.constexpr):
    # from row_max_kernel
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    # from row_sum_exp_kernel
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        s += tl.sum(tl.exp(x - m), axis=0)
    # from normalize_kernel
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.exp(x - m) / s
        tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        fused_row_max_row_sum_exp_normalize_kernel[(M,)](x, N, y, BLOCK=128)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(16384, 4096, device=device)]


def reference(x):
    return torch.softmax(x, dim=-1)
