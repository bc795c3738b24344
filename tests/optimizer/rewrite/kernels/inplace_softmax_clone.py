"""A row softmax that clones its input and overwrites each row of the clone (one program per row)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_rows_kernel(y_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    row_ptr = y_ptr + row * row_stride
    v = tl.load(row_ptr + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(row_ptr + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        y = x.clone()
        R, C = y.shape
        softmax_rows_kernel[(R,)](y, y.stride(0), C, BLOCK=triton.next_power_of_2(C))
        return y


CASES = [{"r": 17, "c": 100}, {"r": 5, "c": 64}]


def get_inputs(r=17, c=100):
    return [torch.randn(r, c)]
