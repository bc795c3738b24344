"""inplace_output example (fresh direction): a leaky ReLU that clones its 64M-element input and rewrites the clone."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "inplace_output", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-6, "rtol": 1e-6}


@triton.jit
def leaky_relu_kernel(y_ptr, n, slope, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.where(v > 0, v, v * slope), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = x.clone()
        n = y.numel()
        leaky_relu_kernel[(triton.cdiv(n, 1024),)](y, n, 0.1, BLOCK=1024, num_warps=4)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(8192, 8192, device=device, dtype=torch.float32)]


def reference(x):
    return torch.nn.functional.leaky_relu(x, 0.1)
