"""Initial Triton candidate for smooth_l1_loss: each program sums the loss terms of one BLOCK_SIZE chunk into a partial,
then one program adds the partials up and scales them."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def smooth_l1_loss_partial_kernel(p_ptr, t_ptr, partial_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    p = tl.load(p_ptr + offsets, mask=mask, other=0.0)
    t = tl.load(t_ptr + offsets, mask=mask, other=0.0)
    d = tl.abs(p - t)
    term = tl.where(d < 1.0, 0.5 * d * d, d - 0.5)
    tl.store(partial_ptr + pid, tl.sum(tl.where(mask, term, 0.0), axis=0))


@triton.jit
def sum_scale_kernel(x_ptr, out_ptr, n, scale, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        predictions = predictions.contiguous()
        targets = targets.contiguous()
        n_elements = predictions.numel()
        BLOCK_SIZE = 2048
        n_blocks = triton.cdiv(n_elements, BLOCK_SIZE)
        partial = torch.empty((n_blocks,), dtype=torch.float32, device=predictions.device)
        out = torch.empty((), dtype=predictions.dtype, device=predictions.device)
        smooth_l1_loss_partial_kernel[(n_blocks,)](
            predictions, targets, partial, n_elements, BLOCK_SIZE=BLOCK_SIZE, num_warps=4
        )
        sum_scale_kernel[(1,)](partial, out, n_blocks, 1.0 / n_elements, BLOCK_SIZE=1024, num_warps=4)
        return out
