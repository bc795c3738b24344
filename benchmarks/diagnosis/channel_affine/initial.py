"""Per-channel affine in Triton: one program per element, its row and column recovered from program_id."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, scale_ptr, shift_ptr, y_ptr, N):
    pid = tl.program_id(0)
    col = pid % N
    x = tl.load(x_ptr + pid).to(tl.float32)
    s = tl.load(scale_ptr + col).to(tl.float32)
    b = tl.load(shift_ptr + col).to(tl.float32)
    tl.store(y_ptr + pid, (x * s + b).to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(N, dtype=torch.float16) + 0.5)
        self.shift = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        affine_kernel[(x.numel(),)](x, self.scale, self.shift, y, x.shape[1], num_warps=4)
        return y
