"""Per-group absmax scaling with one group per program, launched through ``lambda meta: (cdiv(n, meta['BLOCK']),)``
with the block passed at the launch (DeepSeek-V3's act_quant form)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def group_scale_kernel(x_ptr, y_ptr, s_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs).to(tl.float32)
    s = tl.maximum(tl.max(tl.abs(x)), 1e-4) / 448.0
    tl.store(y_ptr + offs, x / s)
    tl.store(s_ptr + pid, s)


class ModelNew(nn.Module):
    def forward(self, x, group: int = 16):
        y = torch.empty_like(x)
        s = x.new_empty(x.numel() // group)
        grid = lambda meta: (triton.cdiv(x.numel(), meta['BLOCK']), )
        group_scale_kernel[grid](x, y, s, BLOCK=group)
        return y, s


CASES = [{"rows": 7, "cols": 48}]


def get_inputs(rows=7, cols=48):
    return [torch.randn(rows, cols)]
