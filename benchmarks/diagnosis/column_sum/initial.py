"""Column sums in Triton: one program per row, adding the row into the fp32 result with atomics."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(x_ptr, out_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr + cols, x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        out = torch.zeros(N, dtype=torch.float32, device=x.device)
        column_sum_kernel[(M,)](x, out, N, BLOCK_N=triton.next_power_of_2(N), num_warps=4)
        return out
