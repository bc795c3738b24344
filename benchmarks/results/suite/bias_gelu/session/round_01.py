"""Initial Triton candidate for bias_gelu: one BLOCK_SIZE chunk of the flattened tensor per program."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_gelu_kernel(x_ptr, bias_ptr, y_ptr, n_elements, n_cols, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    b = tl.load(bias_ptr + offsets % n_cols, mask=mask).to(tl.float32)
    h = x + b
    y = 0.5 * h * (1.0 + tl.erf(h * 0.7071067811865476))
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, N: int, dtype: str = "float32"):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_elements = x.numel()
        BLOCK_SIZE = 2048
        grid = (triton.cdiv(n_elements, BLOCK_SIZE),)
        bias_gelu_kernel[grid](x, self.bias, y, n_elements, x.shape[-1], BLOCK_SIZE=BLOCK_SIZE, num_warps=4)
        return y
