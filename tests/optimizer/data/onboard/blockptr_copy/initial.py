import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def double_bp(X, Y, n, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    src = tl.make_block_ptr(X, (n,), (1,), (start,), (BLOCK,), (0,))
    dst = tl.make_block_ptr(Y, (n,), (1,), (start,), (BLOCK,), (0,))
    tl.store(dst, tl.load(src, boundary_check=(0,)) * 2.0, boundary_check=(0,))


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        double_bp[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        return y
