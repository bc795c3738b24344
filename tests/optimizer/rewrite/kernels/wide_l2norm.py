"""Row L2 norms with the whole row in one next_power_of_2 block (spills once rows are tens of thousands wide)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def l2norm_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        l2norm_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
        return out


CASES = [{"rows": 3, "cols": 5000}, {"rows": 2, "cols": 700}]


def get_inputs(rows=3, cols=5000):
    return [torch.randn(rows, cols)]
