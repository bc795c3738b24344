"""kernel_chain_fusion example (with the row regrid): row norms in one kernel, a flat divide that finds each
element's row by offs // n_cols in a second."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "kernel_chain_fusion", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-5, "rtol": 1e-4}


@triton.jit
def fused_row_norm_divide_kernel(x_ptr, n_cols, y_ptr, n, BLOCK: tl.constexpr):
    # from row_norm_kernel
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    norms_fwd = tl.sqrt(tl.sum(acc, axis=0))
    # from divide_kernel
    norm = norms_fwd
    for col0 in range(0, n_cols, BLOCK):
        cols = col0 + tl.arange(0, BLOCK)
        offs = row * n_cols + cols
        mask = (cols < n_cols) & (offs < n)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.store(y_ptr + offs, x / norm, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        M, N = x.shape
        y = torch.empty_like(x)
        fused_row_norm_divide_kernel[(M,)](x, N, y, M * N, BLOCK=1024)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(16384, 4096, device=device)]


def reference(x):
    return x / torch.linalg.vector_norm(x, dim=1, keepdim=True)
