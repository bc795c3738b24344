"""chunked_row_reduction example: row L2 norms of 65536-wide rows with the whole row in one block (spills)."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "register_spill_relief", "params": {"values": [1024, 2048, 4096, 512], "search": {"num_warps": [4, 8, 16]}}}
CONTEXT = {"evidence": ["ir:register_spill"]}
TOL = {"atol": 1e-3, "rtol": 1e-5}


@triton.jit
def l2norm_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        l2norm_kernel[(n_rows,)](x, out, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
        return out


def get_inputs(device="cuda"):
    return [torch.randn(4096, 65536, device=device)]


def reference(x):
    return torch.linalg.vector_norm(x, dim=1)
