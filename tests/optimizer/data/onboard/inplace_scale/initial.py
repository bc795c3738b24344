import triton
import triton.language as tl
from torch import nn


@triton.jit
def scale_shift_(X, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(X + offs, x * alpha + 1.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, alpha: float = 2.0):
        scale_shift_[(triton.cdiv(x.numel(), 256),)](x, alpha, x.numel(), BLOCK=256)
        return x
