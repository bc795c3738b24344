"""A two-pass row kernel launched through a parameter (kernl's form: the launcher takes the kernel, its caller
defaults it), beside a second kernel the caller may pass instead."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_center_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        total += tl.sum(x, axis=0)
    mean = total / n_cols
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, x - mean, mask=cols < n_cols)


@triton.jit
def row_copy_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(y_ptr + row * n_cols + cols, x, mask=cols < n_cols)


def launch(x, implementation):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    implementation[(n_rows,)](x, y, n_cols, BLOCK=16)
    return y


def center(x, implementation=row_center_kernel):
    return launch(x, implementation)


class ModelNew(nn.Module):
    def forward(self, x):
        return center(x)


CASES = [{"rows": 5, "cols": 70}, {"rows": 3, "cols": 16}]


def get_inputs(rows=5, cols=70):
    return [torch.randn(rows, cols)]
