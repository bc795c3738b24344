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
def row_max_kernel(x_ptr, max_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    tl.store(max_ptr + row, m)


@triton.jit
def row_sum_exp_kernel(x_ptr, max_ptr, sum_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.load(max_ptr + row)
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        s += tl.sum(tl.exp(x - m), axis=0)
    tl.store(sum_ptr + row, s)


@triton.jit
def normalize_kernel(x_ptr, max_ptr, sum_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = tl.load(max_ptr + row)
    s = tl.load(sum_ptr + row)
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
        row_max = torch.empty(M, dtype=torch.float32, device=x.device)
        row_sum = torch.empty(M, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x)
        row_max_kernel[(M,)](x, row_max, N, BLOCK=128)
        row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, BLOCK=128)
        normalize_kernel[(M,)](x, row_max, row_sum, y, N, BLOCK=128)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(16384, 4096, device=device)]


def reference(x):
    return torch.softmax(x, dim=-1)
