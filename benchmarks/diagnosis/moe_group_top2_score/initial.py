"""Grouped top-2 score sum in Triton: one program per (token, group), the group's scores in one block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def group_top2_kernel(s_ptr, out_ptr, GS: tl.constexpr):
    pid = tl.program_id(0)  # token * G + group: groups are contiguous in memory
    offs = tl.arange(0, GS)
    s = tl.load(s_ptr + pid * GS + offs)
    first = tl.argmax(s, axis=0)
    best = tl.max(s, axis=0)
    second = tl.max(tl.where(offs == first, -float("inf"), s), axis=0)
    tl.store(out_ptr + pid, best + second)


class ModelNew(nn.Module):
    def __init__(self, G: int):
        super().__init__()
        self.G = G

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.contiguous()
        T, E = scores.shape
        out = torch.empty((T, self.G), dtype=scores.dtype, device=scores.device)
        group_top2_kernel[(T * self.G,)](scores, out, GS=E // self.G, num_warps=1)
        return out
