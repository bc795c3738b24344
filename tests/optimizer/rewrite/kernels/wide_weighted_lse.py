"""A whole-row weighted log-softmax (attorch's launch form): the strides passed as ``*x.stride()``, a constexpr
``if WEIGHTED:`` scaling the row block in place (``x *= w``), and a constexpr ``if`` / ``elif`` / ``else`` chain
adjusting the log-sum-exp scalar with augmented assignments before the row is written."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def weighted_lse_kernel(x_ptr, w_ptr, y_ptr, lse_ptr, n_cols, row_stride, col_stride, scale,
                        WEIGHTED: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * row_stride + cols * col_stride, mask=cols < n_cols, other=-float("inf"))
    x = x.to(tl.float32)
    if WEIGHTED:
        x *= tl.load(w_ptr + cols, mask=cols < n_cols, other=1.0)
    mx = tl.max(x, 0)
    lse = tl.log(tl.sum(tl.exp(x - mx), 0)) + mx
    if MODE == "mean":
        lse /= n_cols
    elif MODE == "scale":
        lse *= scale
    else:
        lse += scale
    tl.store(y_ptr + row * n_cols + cols, x - lse, mask=cols < n_cols)
    tl.store(lse_ptr + row, lse)


class ModelNew(nn.Module):
    def forward(self, x, w):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        lse = torch.empty(n_rows, dtype=torch.float32)
        mode = "mean" if n_cols > 60 else "scale" if n_cols > 45 else "shift"
        weighted_lse_kernel[(n_rows,)](x, w, y, lse, n_cols, *x.stride(), 0.5,
                                       WEIGHTED=True, MODE=mode, BLOCK=triton.next_power_of_2(n_cols))
        return y, lse


CASES = [{"rows": 5, "cols": 70}, {"rows": 4, "cols": 50}, {"rows": 3, "cols": 40}, {"rows": 3, "cols": 16}]


def get_inputs(rows=5, cols=70):
    return [torch.randn(rows, cols), torch.rand(cols) + 0.5]
