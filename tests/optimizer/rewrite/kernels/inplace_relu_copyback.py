"""An in-place ReLU (the problem declares input 0 as its output) through a fresh buffer copied back with copy_."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(v, 0.0), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
        x.copy_(out)
        return x


CASES = [{"n": 3000}]


def get_inputs(n=3000):
    return [torch.randn(n)]
