"""A loss summed over a [B, M, N] batch, one launch per batch entry: each program adds its row's sum of squares to
one shared float (an order-free accumulation), and writes its scaled row to the entry's output."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def sq_total_kernel(x_ptr, y_ptr, total_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * N + cols, 2.0 * v, mask=mask)
    tl.atomic_add(total_ptr, tl.sum(v * v, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        B, M, N = x.shape
        y = torch.empty_like(x)
        total = torch.zeros(1, dtype=torch.float32, device=x.device)
        for i in range(B):
            sq_total_kernel[(M,)](x[i], y[i], total, N, BLOCK=triton.next_power_of_2(N))
        return y, total


CASES = [{"b": 4, "m": 3, "n": 30}]


def get_inputs(b=4, m=3, n=30):
    return [torch.randn(b, m, n)]
