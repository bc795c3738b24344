"""Per row max(x) - mean(x) from one whole-row block: two reductions (a max with -inf lanes, a sum)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def max_minus_mean_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    m = tl.max(tl.where(mask, x, float("-inf")), axis=0)
    s = tl.sum(x, axis=0)
    tl.store(out_ptr + row, m - s / n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        max_minus_mean_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
        return out


CASES = [{"rows": 3, "cols": 3000}]


def get_inputs(rows=3, cols=3000):
    return [torch.randn(rows, cols) - 5.0]
