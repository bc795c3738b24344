"""two_stage_reduction example: a full sum where every program atomically adds its block sum into one scalar."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "two_stage_reduction", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-1, "rtol": 1e-5}  # a sum of 2^26 randn values (~8e3) in different orders


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, partials_tsr, n_blocks_ts):
    acc_ts = tl.zeros([], dtype=tl.float32)
    for blk_ts in range(tl.program_id(0), n_blocks_ts, tl.num_programs(0)):
        pid = blk_ts
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc_ts += (tl.sum(x, axis=0)).to(tl.float32)
    tl.store(partials_tsr + tl.program_id(0), acc_ts)
@triton.jit
def sum_kernel_finish(partials_ptr, out_ptr, n_partials, offset, BLOCK: tl.constexpr):
    """Second stage of sum_kernel: sum the per-program partials in a fixed order, add the total to the output."""
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partials_ptr + offs, mask=offs < n_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + offset, tl.load(out_ptr + offset) + total)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.zeros(1, dtype=torch.float32, device=x.device)
        n = x.numel()
        partials_tsr = torch.empty(min(triton.cdiv(n, 1024), 2048), device=out.device, dtype=torch.float32)
        sum_kernel[(min(triton.cdiv(n, 1024), 2048),)](x, out, n, BLOCK=1024, n_blocks_ts=triton.cdiv(n, 1024), partials_tsr=partials_tsr)
        sum_kernel_finish[(1,)](partials_tsr, out, partials_tsr.numel(), 0, BLOCK=1024)
        return out


def get_inputs(device="cuda"):
    return [torch.randn(1 << 26, device=device)]


def reference(x):
    return x.sum().reshape(1)
