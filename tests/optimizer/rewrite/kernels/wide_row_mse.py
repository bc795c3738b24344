"""Per-row mean squared error of two inputs (cast to fp32) with the whole row as one block."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_mse_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + row * n + offs, mask=offs < n, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n + offs, mask=offs < n, other=0.0).to(tl.float32)
    d = a - b
    tl.store(out_ptr + row, tl.sum(d * d, axis=0) / n)


class ModelNew(nn.Module):
    def forward(self, a, b):
        n_rows, n = a.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        row_mse_kernel[(n_rows,)](a, b, out, n, BLOCK=triton.next_power_of_2(n))
        return out


CASES = [{"rows": 2, "n": 4100}]


def get_inputs(rows=2, n=4100):
    return [torch.randn(rows, n), torch.randn(rows, n)]
