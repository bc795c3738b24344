"""Per-row RMS scaling in two kernels: a row kernel stores each row's scale, a flat element-wise kernel reads it
back at offs // n_cols (its row) and also uses offs % n_cols for a per-column bias."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_rms_kernel(x_ptr, rms_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sq = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        sq += tl.sum(x * x, axis=0)
    tl.store(rms_ptr + row, tl.sqrt(sq / n_cols + 1e-6))


@triton.jit
def scale_bias_kernel(x_ptr, rms_ptr, b_ptr, y_ptr, n, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    r = tl.load(rms_ptr + offs // n_cols, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x / r + b, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, b):
        x = x.contiguous()
        M, N = x.shape
        rms = torch.empty(M, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x)
        row_rms_kernel[(M,)](x, rms, N, BLOCK=32)
        scale_bias_kernel[(triton.cdiv(M * N, 64),)](x, rms, b, y, M * N, N, BLOCK=64)
        return y


CASES = [{"m": 5, "n": 70}, {"m": 3, "n": 16}]


def get_inputs(m=5, n=70):
    return [torch.randn(m, n), torch.randn(n)]
