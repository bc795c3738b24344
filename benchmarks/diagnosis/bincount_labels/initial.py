"""bincount in Triton: each program loads a BLOCK of labels and atomically increments their class counters."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bincount_kernel(labels_ptr, counts_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    lab = tl.load(labels_ptr + offs, mask=mask, other=0)
    tl.atomic_add(counts_ptr + lab, tl.full((BLOCK,), 1, tl.int32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, C: int):
        super().__init__()
        self.C = C

    def forward(self, labels: torch.Tensor) -> torch.Tensor:
        n = labels.numel()
        counts = torch.zeros(self.C, dtype=torch.int32, device=labels.device)
        BLOCK = 1024
        bincount_kernel[(triton.cdiv(n, BLOCK),)](labels, counts, n, BLOCK=BLOCK, num_warps=4)
        return counts.to(torch.int64)
