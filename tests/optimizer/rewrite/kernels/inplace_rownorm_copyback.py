"""Rows scaled to unit L2 norm in place (declared in-place output) through a buffer copied back, row grid."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_l2_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    inv = 1.0 / tl.sqrt(tl.sum(v * v, axis=0) + 1e-6)
    tl.store(out_ptr + row * stride + cols, v * inv, mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        R, C = x.shape
        out = torch.empty_like(x)
        row_l2_kernel[(R,)](x, out, x.stride(0), C, BLOCK=triton.next_power_of_2(C))
        x.copy_(out)


CASES = [{"r": 9, "c": 50}]


def get_inputs(r=9, c=50):
    return [torch.randn(r, c)]
