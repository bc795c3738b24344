import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def scale_shift(X, Y, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(Y + offs, x * alpha + 1.0, mask=mask)


class ModelNew(nn.Module):
    """Returns the right values but leaves the input untouched: the declared in-place result is wrong."""

    def forward(self, x, alpha: float = 2.0):
        y = torch.empty_like(x)
        scale_shift[(triton.cdiv(x.numel(), 256),)](x, y, alpha, x.numel(), BLOCK=256)
        return y
