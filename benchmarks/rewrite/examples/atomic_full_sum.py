"""two_stage_reduction example: a full sum where every program atomically adds its block sum into one scalar."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "two_stage_reduction", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-1, "rtol": 1e-5}  # a sum of 2^26 randn values (~8e3) in different orders


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        n = x.numel()
        sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out


def get_inputs(device="cuda"):
    return [torch.randn(1 << 26, device=device)]


def reference(x):
    return x.sum().reshape(1)
