"""Layer norm forward: mean pass, variance pass, then a normalize-and-store pass (three reads of each row)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        s += v
    mu = tl.sum(s, axis=0) / N
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        dv = tl.where(cols < N, v - mu, 0.0)
        sq += dv * dv
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        v = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        tl.store(y_row + cols, (v - mu) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def forward(self, x, w, b):
        n_rows, n = x.shape
        y = torch.empty_like(x)
        layernorm_kernel[(n_rows,)](x, w, b, y, n, x.stride(0), 1e-5, BLOCK=64)
        return y


CASES = [{"rows": 4, "n": 200}]


def get_inputs(rows=4, n=200):
    return [torch.randn(rows, n), torch.randn(n), torch.randn(n)]
