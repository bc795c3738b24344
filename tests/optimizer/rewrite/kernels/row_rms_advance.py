"""RMS norm with one row per program that moves its pointers to the row first (x_ptr += row * stride)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rms_kernel(x_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for off in range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + cols, x * rstd, mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        rms_kernel[(n_rows,)](x, y, n_cols, x.stride(0), 1e-6, BLOCK=32)
        return y


CASES = [{"rows": 9, "cols": 70}]


def get_inputs(rows=9, cols=70):
    return [torch.randn(rows, cols)]
