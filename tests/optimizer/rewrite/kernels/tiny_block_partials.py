"""Per-program partial sums over 256-element blocks, the block count named on the host, then a finishing kernel."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def partial_sq_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def finish_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    total = 0.0
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        total += tl.sum(tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0), axis=0)
    tl.store(out_ptr, total)


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        n_partials = triton.cdiv(n, 256)
        partials = torch.empty(n_partials, dtype=torch.float32)
        out = torch.empty((), dtype=torch.float32)
        partial_sq_kernel[(n_partials,)](x, partials, n, BLOCK=256)
        finish_kernel[(1,)](partials, out, n_partials, BLOCK=256)
        return out


CASES = [{"n": 5000}, {"n": 300}]


def get_inputs(n=5000):
    return [torch.randn(n)]
