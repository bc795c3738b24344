"""A global minimum over a 2-D tuple grid: each program takes its tile's min and atomically merges it into one
element that starts at +inf."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def min_kernel(x_ptr, out_ptr, m, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=float("inf"))
    tl.atomic_min(out_ptr, tl.min(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.full((1,), float("inf"), dtype=torch.float32)
        m, n = x.shape
        min_kernel[(m, triton.cdiv(n, 32))](x, out, m, n, BLOCK=32)
        return out


CASES = [{"m": 5, "n": 300}, {"m": 2, "n": 7}]


def get_inputs(m=5, n=300):
    return [torch.randn(m, n)]
