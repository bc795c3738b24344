"""out = a * x + y with the clone of y as the accumulator written in place (two inputs, the in-place pointer second)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def axpy_kernel(x_ptr, out_ptr, a, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    ptrs = out_ptr + offsets
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements)
    acc = tl.load(ptrs, mask=offsets < n_elements)
    tl.store(ptrs, a * x + acc, mask=offsets < n_elements)


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.clone(y)
        BLOCK_SIZE = 128
        axpy_kernel[(triton.cdiv(out.numel(), BLOCK_SIZE),)](x, out, 2.5, out.numel(), BLOCK_SIZE=BLOCK_SIZE)
        return out


CASES = [{"n": 1000}, {"n": 4096}]


def get_inputs(n=1000):
    return [torch.randn(n), torch.randn(n)]
