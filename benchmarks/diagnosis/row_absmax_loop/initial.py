"""Per-token int8 scales in Triton: one program per row, a running absolute maximum updated with the maximum of
every 512-column chunk."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def absmax_scale_kernel(x_ptr, scale_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        m = tl.maximum(m, tl.max(tl.abs(x), axis=0))
    tl.store(scale_ptr + row, m / 127.0)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        scale = torch.empty(M, dtype=torch.float32, device=x.device)
        absmax_scale_kernel[(M,)](x, scale, N, BLOCK=512, num_warps=4)
        return scale
