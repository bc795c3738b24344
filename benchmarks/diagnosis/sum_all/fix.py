"""Full sum in Triton, two stages: P programs each accumulate a strided share of the input into one partial,
then one program adds the P partials (no atomics, deterministic)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    step = tl.num_programs(0) * BLOCK
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(pid * BLOCK, n, step):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def finish_kernel(partial_ptr, out_ptr, P, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    tl.store(out_ptr, tl.sum(tl.load(partial_ptr + offs, mask=offs < P, other=0.0), axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n = x.numel()
        BLOCK = 4096
        P = max(1, min(1024, triton.cdiv(n, BLOCK)))
        partial = torch.empty(P, dtype=torch.float32, device=x.device)
        out = torch.empty((), dtype=x.dtype, device=x.device)
        partial_sum_kernel[(P,)](x, partial, n, BLOCK=BLOCK, num_warps=8)
        finish_kernel[(1,)](partial, out, P, BLOCK_P=triton.next_power_of_2(P), num_warps=4)
        return out
