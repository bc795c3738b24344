"""inplace_output example (in-place direction): a ReLU declared in place, written to a fresh buffer then x.copy_(out).

ReLU is idempotent, so the repeated timed calls (each overwrites x) keep matching the reference."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "inplace_output", "params": {}}
CONTEXT = {}
TOL = {"atol": 0.0, "rtol": 0.0}


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, tl.maximum(v, 0.0), mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.numel()
        relu_kernel[(triton.cdiv(n, 1024),)](x, x, n, BLOCK=1024, num_warps=4)
        return x


def get_inputs(device="cuda"):
    return [torch.randn(8192, 8192, device=device, dtype=torch.float32)]


def reference(x):
    return torch.relu(x)
