"""Naive first translation of argmax: one row per program, a running (max, index) pair over 128-column chunks."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    best = float("-inf")
    best_idx = 0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.max(x, axis=0)
        i = tl.argmax(x, axis=0)
        # strictly greater: an earlier chunk keeps a tie, as torch returns the first maximum
        best_idx = tl.where(m > best, start + i, best_idx)
        best = tl.maximum(best, m)
    tl.store(y_ptr + row, best_idx.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        assert dim in (-1, 1), "this kernel reduces the last dimension of a 2-D tensor"
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty(M, dtype=torch.int64, device=x.device)
        argmax_kernel[(M,)](x, y, N, BLOCK=128)
        return y
