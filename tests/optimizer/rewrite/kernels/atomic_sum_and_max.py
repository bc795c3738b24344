"""A sum and a maximum in one pass: every program adds its block's sum into out[0] and merges its block's max
into out[1], two independent same-address atomics."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def sum_max_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))
    tl.atomic_max(out_ptr + 1, tl.max(tl.where(offs < n, x, float("-inf")), axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.tensor([0.0, float("-inf")], dtype=torch.float32)
        n = x.numel()
        sum_max_kernel[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        return out


CASES = [{"n": 5000}, {"n": 77}]


def get_inputs(n=5000):
    return [torch.randn(n)]
