"""bincount in Triton, two stages: each program counts its share of the labels per class in registers
(one-hot sums) and writes one row of partial counts; a second kernel adds the rows (no atomics)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def partial_count_kernel(labels_ptr, partial_ptr, n, C, BLOCK: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    classes = tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.int32)
    for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        lab = tl.load(labels_ptr + offs, mask=offs < n, other=-1)
        acc += tl.sum((lab[:, None] == classes[None, :]).to(tl.int32), axis=0)
    tl.store(partial_ptr + pid * C + classes, acc, mask=classes < C)


@triton.jit
def sum_rows_kernel(partial_ptr, out_ptr, P, C, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    classes = tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=tl.int64)
    for r0 in range(0, P, BLOCK_P):
        rows = r0 + tl.arange(0, BLOCK_P)
        p = tl.load(partial_ptr + rows[:, None] * C + classes[None, :],
                    mask=(rows[:, None] < P) & (classes[None, :] < C), other=0)
        acc += tl.sum(p.to(tl.int64), axis=0)
    tl.store(out_ptr + classes, acc, mask=classes < C)


class ModelNew(nn.Module):
    def __init__(self, C: int):
        super().__init__()
        self.C = C

    def forward(self, labels: torch.Tensor) -> torch.Tensor:
        n = labels.numel()
        BLOCK_C = triton.next_power_of_2(self.C)
        BLOCK = max(32, 4096 // BLOCK_C)  # the BLOCK x BLOCK_C one-hot tile stays at 32 values per thread
        P = max(1, min(512, triton.cdiv(n, BLOCK)))
        partial = torch.empty((P, self.C), dtype=torch.int32, device=labels.device)
        out = torch.empty(self.C, dtype=torch.int64, device=labels.device)
        partial_count_kernel[(P,)](labels, partial, n, self.C, BLOCK=BLOCK, BLOCK_C=BLOCK_C, num_warps=4)
        sum_rows_kernel[(1,)](partial, out, P, self.C, BLOCK_P=32, BLOCK_C=BLOCK_C, num_warps=4)
        return out
