"""Naive softmax (benchmarks/suite/softmax/naive.py): three kernels over the same rows, per-row max and sum
passed through global buffers."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


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
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        row_max = torch.empty(M, dtype=torch.float32, device=x.device)
        row_sum = torch.empty(M, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x)
        row_max_kernel[(M,)](x, row_max, N, BLOCK=128)
        row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, BLOCK=128)
        normalize_kernel[(M,)](x, row_max, row_sum, y, N, BLOCK=128)
        return y


CASES = [{"m": 5, "n": 300}, {"m": 3, "n": 128}]


def get_inputs(m=5, n=300):
    return [torch.randn(m, n) * 4]
