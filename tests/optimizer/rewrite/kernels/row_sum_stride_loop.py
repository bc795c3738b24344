"""Row sums with one row per program whose column loop advances the pointer parameter (x_ptr += BLOCK)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * stride + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    remaining = n_cols  # per row: needs no saving
    for _ in range(0, n_cols, BLOCK):
        acc += tl.load(x_ptr + cols, mask=tl.arange(0, BLOCK) < remaining, other=0.0)
        x_ptr += BLOCK
        remaining -= BLOCK
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, dtype=torch.float32)
        row_sum_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=16)
        return out


CASES = [{"rows": 7, "cols": 50}]


def get_inputs(rows=7, cols=50):
    return [torch.randn(rows, cols)]
