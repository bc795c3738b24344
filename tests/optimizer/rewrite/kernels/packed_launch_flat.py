"""A flattened elementwise kernel launched through a packed argument tuple and a keyword dict (*args, **kwargs)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def add_mul_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    m = offs < n
    out = (tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m)) * tl.load(z_ptr + offs, mask=m)
    tl.store(out_ptr + offs, out, mask=m)


class ModelNew(nn.Module):
    def forward(self, x, y, z):
        out = torch.empty_like(x)
        n = x.numel()
        block = 128
        grid = ((n + block - 1) // block,)
        args = (x, y, z, out, n)
        meta = dict(BLOCK_SIZE=block, num_warps=4)
        add_mul_kernel[grid](*args, **meta)
        return out


CASES = [{"n": 5000}, {"n": 129}]


def get_inputs(n=5000):
    return [torch.randn(n), torch.randn(n), torch.randn(n)]
