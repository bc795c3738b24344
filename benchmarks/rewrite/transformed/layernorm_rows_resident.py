"""row_resident example: layer norm forward whose mean, variance and normalize loops each reload the row."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "row_resident", "params": {"values": [8192]}}
CONTEXT = {}
TOL = {"atol": 1e-4, "rtol": 1e-4}


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * n_cols
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0)
        total += tl.sum(x, axis=0)
    mean = total / n_cols
    sq = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        sq += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(sq / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        tl.store(y_ptr + base + cols, (x - mean) * rstd * w + b, mask=mask)
@triton.jit
def layernorm_kernel_rows(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * n_cols
    total = 0.0
    start = 0
    cols = start + tl.arange(0, BLOCK)
    row_vals0 = tl.load(x_ptr + base + cols, mask=cols < n_cols)
    x = tl.where(cols < n_cols, row_vals0, 0.0)
    total += tl.sum(x, axis=0)
    mean = total / n_cols
    sq = 0.0
    start = 0
    cols = start + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.where(mask, row_vals0, 0.0)
    d = tl.where(mask, x - mean, 0.0)
    sq += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(sq / n_cols + eps)
    start = 0
    cols = start + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.where(mask, row_vals0, 0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + base + cols, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, w, b):
        M, N = x.shape
        y = torch.empty_like(x)
        if N <= 8192:
            layernorm_kernel_rows[(M,)](x, w, b, y, N, 1e-5, BLOCK=triton.next_power_of_2(N), num_warps=min(16, max(4, triton.next_power_of_2(N) // 512)))
        else:
            layernorm_kernel[(M,)](x, w, b, y, N, 1e-5, BLOCK=1024, num_warps=4)
        return y


def get_inputs(device="cuda"):
    n = 4096
    return [torch.randn(16384, n, device=device), torch.randn(n, device=device), torch.randn(n, device=device)]


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5)
