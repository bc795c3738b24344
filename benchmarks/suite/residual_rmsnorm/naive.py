"""Naive first translation of residual_rmsnorm: one kernel adds the residual (256-element chunks), a second
normalizes h = x + residual (one row per program, a sum-of-squares pass then a scale pass, 128-column chunks)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, r_ptr, h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offs, (x + r).to(h_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_kernel(h_ptr, w_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sq = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        h = tl.load(h_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        sq += tl.sum(h * h, axis=0)
    rstd = 1.0 / tl.sqrt(sq / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        h = tl.load(h_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * n_cols + cols, (h * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int, dtype: str = "float32", eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, residual = x.contiguous(), residual.contiguous()
        M, N = x.shape
        h = torch.empty_like(x)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(M * N, 256),)](x, residual, h, M * N, BLOCK=256)
        rmsnorm_kernel[(M,)](h, self.weight, out, N, self.eps, BLOCK=128)
        return out, h
