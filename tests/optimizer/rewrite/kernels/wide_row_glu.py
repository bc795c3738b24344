"""One program per row, the whole row in one power-of-two block, element-wise along it (a GLU-style gate)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def gate_kernel(a, b, c, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    a += row * stride
    b += row * stride
    c += row * stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    x = tl.load(a + col_offsets, mask=mask, other=0).to(tl.float32)
    y = tl.load(b + col_offsets, mask=mask, other=0)
    g = x / (1.0 + tl.exp(-x))
    tl.store(c + col_offsets, g.cast(y.dtype) * y, mask=mask)


def settings(n):
    block = triton.next_power_of_2(n)
    return block, 16 if block >= 8192 else 4


class ModelNew(nn.Module):
    def forward(self, a, b):
        n_cols = a.shape[-1]
        a2 = a.view(-1, n_cols)
        b2 = b.view(-1, n_cols)
        c = torch.empty_like(a2)
        BLOCK_SIZE, num_warps = settings(n_cols)
        gate_kernel[(a2.shape[0],)](a2, b2, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                    num_warps=num_warps)
        return c.view(*a.shape)


CASES = [{"M": 3, "N": 2500}, {"M": 2, "N": 300}, {"M": 4, "N": 1024}]


def get_inputs(M=3, N=2500):
    return [torch.randn(M, N), torch.randn(M, N)]
