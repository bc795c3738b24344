"""Row variance in two passes over the row (a mean pass, then a squared-deviation pass), masked tails."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_var_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < N, other=0.0)
        acc += x
    mean = tl.sum(acc, axis=0) / N
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < N, other=0.0)
        d = tl.where(cols < N, x - mean, 0.0)
        acc2 += d * d
    tl.store(out_ptr + row, tl.sum(acc2, axis=0) / N)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n = x.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        row_var_kernel[(n_rows,)](x, out, n, x.stride(0), BLOCK=32)
        return out


CASES = [{"rows": 5, "n": 100}, {"rows": 3, "n": 7}]


def get_inputs(rows=5, n=100):
    return [torch.randn(rows, n) * 3 + 100.0]  # a large mean: a naive sum-of-squares would cancel
