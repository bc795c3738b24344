"""Standard deviation of fixed-width rows (N a multiple of BLOCK: unmasked loads), the deviation squared inline."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_std_kernel(x_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + off + tl.arange(0, BLOCK))
        total = total + x
    mean = tl.sum(total, axis=0) / N
    m2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + off + tl.arange(0, BLOCK))
        m2 += (x - mean) * (x - mean)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(m2, axis=0) / (N - 1)))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n = x.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        row_std_kernel[(n_rows,)](x, out, N=n, BLOCK=16)
        return out


CASES = [{"rows": 6, "n": 64}]


def get_inputs(rows=6, n=64):
    return [torch.rand(rows, n) * 10]
