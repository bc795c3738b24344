"""Per-head scaled copy of a [B, H, T] tensor into a head-major [H, B, T] output, one launch per (batch, head) over a
one-axis block grid named `grid`: the loop body binds aliases first (`src = q[b, h]`, `dst, sc = out[h, b],
scale[h]`), and the output slice indexes its dimensions in the other order."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def head_scale_kernel(src_ptr, dst_ptr, sc_ptr, T, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < T
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(dst_ptr + offs, v * tl.load(sc_ptr), mask=mask)


class ModelNew(nn.Module):
    def forward(self, q, scale):
        B, H, T = q.shape
        out = torch.empty(H, B, T, dtype=q.dtype, device=q.device)
        BLOCK = 16
        grid = (triton.cdiv(T, BLOCK),)
        for b in range(B):
            for h in range(H):
                src = q[b, h]
                dst, sc = out[h, b], scale[h]
                head_scale_kernel[grid](src, dst, sc, T, BLOCK=BLOCK)
        return out


CASES = [{"b": 2, "h": 3, "t": 40}, {"b": 3, "h": 1, "t": 9}]


def get_inputs(b=2, h=3, t=40):
    return [torch.randn(b, h, t), torch.randn(h)]
