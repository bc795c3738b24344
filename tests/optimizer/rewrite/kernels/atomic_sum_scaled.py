"""A scaled full sum whose kernel ends in a defaulted constexpr (``SCALE: tl.constexpr = 1.0``, a common published
form): every program reduces its block and atomically adds the scalar into one output element."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SCALE: tl.constexpr = 1.0):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * SCALE, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=torch.float32)
        n = x.numel()
        sum_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out


CASES = [{"n": 5000}, {"n": 77}]


def get_inputs(n=5000):
    return [torch.randn(n)]
