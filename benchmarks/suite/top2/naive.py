"""Naive first translation of top2: one row per program, three passes over 128-column chunks (the maximum, the
first column holding it, the maximum of the other columns)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def top2_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    first = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        first = tl.maximum(first, tl.max(x, axis=0))
    first_idx = n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        first_idx = tl.minimum(first_idx, tl.min(tl.where((x == first) & (cols < n_cols), cols, n_cols), axis=0))
    second = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=(cols < n_cols) & (cols != first_idx), other=float("-inf"))
        second = tl.maximum(second, tl.max(x, axis=0))
    tl.store(y_ptr + row * 2, first)
    tl.store(y_ptr + row * 2 + 1, second)


class ModelNew(nn.Module):
    def __init__(self, k: int = 2):
        super().__init__()
        assert k == 2, "this kernel computes the top 2 only"
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty((M, 2), dtype=x.dtype, device=x.device)
        top2_kernel[(M,)](x, y, N, BLOCK=128)
        return y
