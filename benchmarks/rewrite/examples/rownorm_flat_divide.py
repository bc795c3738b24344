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
def row_norm_kernel(x_ptr, norm_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    tl.store(norm_ptr + row, tl.sqrt(tl.sum(acc, axis=0)))


@triton.jit
def divide_kernel(x_ptr, norm_ptr, y_ptr, n, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    norm = tl.load(norm_ptr + offs // n_cols, mask=mask, other=1.0)
    tl.store(y_ptr + offs, x / norm, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        M, N = x.shape
        norms = torch.empty(M, dtype=torch.float32, device=x.device)
        y = torch.empty_like(x)
        row_norm_kernel[(M,)](x, norms, N, BLOCK=1024)
        divide_kernel[(triton.cdiv(M * N, 1024),)](x, norms, y, M * N, N, BLOCK=1024)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(16384, 4096, device=device)]


def reference(x):
    return x / torch.linalg.vector_norm(x, dim=1, keepdim=True)
