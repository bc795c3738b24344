"""Per-row statistics in column loops that reduce every chunk to a scalar: a max pass, a sum-of-exp pass that
also counts positive entries (int32), and a min carried from a non-literal start (left as it is)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_stats_kernel(x_ptr, out_ptr, cnt_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    count = 0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        s = s + tl.sum(tl.exp(x - m), axis=0)
        count += tl.sum((x > 0).to(tl.int32), axis=0)
    lo = m
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("inf"))
        lo = tl.minimum(lo, tl.min(x, axis=0))
    tl.store(out_ptr + row * 3, m)
    tl.store(out_ptr + row * 3 + 1, s)
    tl.store(out_ptr + row * 3 + 2, lo)
    tl.store(cnt_ptr + row, count)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, 3, dtype=torch.float32)
        cnt = torch.empty(n_rows, dtype=torch.int32)
        row_stats_kernel[(n_rows,)](x, out, cnt, n_cols, BLOCK=16)
        return out, cnt


CASES = [{"rows": 5, "cols": 70}, {"rows": 3, "cols": 16}]


def get_inputs(rows=5, cols=70):
    return [torch.randn(rows, cols)]
