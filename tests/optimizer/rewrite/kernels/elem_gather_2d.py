"""A gather with one program per output element that splits the index with // and % (row, column)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def gather_rows_kernel(x_ptr, idx_ptr, out_ptr, n_cols, stride_x):
    pid = tl.program_id(0)
    row = pid // n_cols
    col = pid % n_cols
    src = tl.load(idx_ptr + row)
    val = tl.load(x_ptr + src * stride_x + col)
    tl.store(out_ptr + pid, val)


class ModelNew(nn.Module):
    def forward(self, x, idx):
        n_rows, n_cols = idx.shape[0], x.shape[1]
        out = torch.empty((n_rows, n_cols), dtype=x.dtype)
        grid = (n_rows * n_cols,)
        gather_rows_kernel[grid](x, idx, out, n_cols, x.stride(0))
        return out


CASES = [{"rows": 5, "cols": 70}, {"rows": 2, "cols": 130}]


def get_inputs(rows=5, cols=70):
    x = torch.randn(40, cols)
    return [x, torch.randint(0, 40, (rows,))]
