"""Initial Triton candidate for cross_entropy: one row per program (a max pass and a sum-of-exp pass over
BLOCK_SIZE chunks), then one program averages the per-row losses."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cross_entropy_rows_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, row_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * row_stride
    running_max = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + tl.arange(0, BLOCK_SIZE)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        running_max = tl.maximum(running_max, x)
    row_max = tl.max(running_max, axis=0)
    sum_exp = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_SIZE):
        cols = c0 + tl.arange(0, BLOCK_SIZE)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf"))
        sum_exp += tl.exp(x - row_max)
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(base + target)
    loss = tl.log(tl.sum(sum_exp, axis=0)) + row_max - target_logit
    tl.store(loss_ptr + row, loss)


@triton.jit
def mean_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        logits = logits.contiguous()
        targets = targets.contiguous()
        n_rows, n_cols = logits.shape
        row_loss = torch.empty((n_rows,), dtype=torch.float32, device=logits.device)
        out = torch.empty((), dtype=logits.dtype, device=logits.device)
        cross_entropy_rows_kernel[(n_rows,)](
            logits, targets, row_loss, n_cols, logits.stride(0), BLOCK_SIZE=2048, num_warps=4
        )
        mean_kernel[(1,)](row_loss, out, n_rows, BLOCK_SIZE=1024, num_warps=4)
        return out
