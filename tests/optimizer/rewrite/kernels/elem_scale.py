"""One program per element, guarded by an early return (a first translation of y = alpha * x)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha):
    pid = tl.program_id(0)
    if pid >= n:
        return
    x = tl.load(x_ptr + pid)  # one element
    tl.store(y_ptr + pid, x * alpha)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        n = x.numel()
        scale_kernel[(n,)](x, y, n, 2.0)
        return y


CASES = [{"n": 300}, {"n": 37}]


def get_inputs(n=300):
    return [torch.randn(n)]
