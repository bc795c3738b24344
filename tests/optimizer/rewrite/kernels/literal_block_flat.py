"""An elementwise kernel that hard-codes its 128-element block in the kernel and in the grid."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n):
    pid = tl.program_id(0)
    offs = pid * 128 + tl.arange(0, 128)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476)), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 128),)](x, y, n)
        return y


CASES = [{"n": 5000}, {"n": 129}]


def get_inputs(n=5000):
    return [torch.randn(n)]
