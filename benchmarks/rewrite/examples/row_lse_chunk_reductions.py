"""lane_accumulators example: row log-sum-exp with a max pass and a sum-of-exp pass that reduce every chunk."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "lane_accumulators", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-4, "rtol": 1e-4}


@triton.jit
def row_lse_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = float("-inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        m = tl.maximum(m, tl.max(x, axis=0))
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
        s += tl.sum(tl.exp(x - m), axis=0)
    tl.store(out_ptr + row, m + tl.log(s))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        row_lse_kernel[(n_rows,)](x, out, n_cols, BLOCK=512, num_warps=4)
        return out


def get_inputs(device="cuda"):
    return [torch.randn(8192, 16384, device=device)]


def reference(x):
    return torch.logsumexp(x, dim=1)
