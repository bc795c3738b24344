"""SwiGLU in Triton with true alignment hints: F and the row stride are multiples of ALIGN (computed at
launch), so every row start, the up-half offset and the column bound are declared and the accesses vectorize."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _align(*sizes: int) -> int:
    """The largest of 8, 4, 2, 1 that divides every size."""
    return next(a for a in (8, 4, 2, 1) if all(s % a == 0 for s in sizes))


@triton.jit
def swiglu_kernel(x_ptr, y_ptr, F, stride_x, BLOCK: tl.constexpr, ALIGN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = tl.max_constancy(cols < F, ALIGN)
    g_start = tl.multiple_of(row * stride_x, ALIGN)
    u_start = tl.multiple_of(row * stride_x + F, ALIGN)
    g = tl.load(x_ptr + g_start + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_ptr + u_start + cols, mask=mask, other=0.0).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(y_ptr + tl.multiple_of(row * F, ALIGN) + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, F = x.shape[0], x.shape[1] // 2
        y = torch.empty((M, F), dtype=x.dtype, device=x.device)
        BLOCK = 1024
        swiglu_kernel[(M, triton.cdiv(F, BLOCK))](x, y, F, x.stride(0), BLOCK=BLOCK, ALIGN=_align(F, x.stride(0)),
                                                  num_warps=4)
        return y
