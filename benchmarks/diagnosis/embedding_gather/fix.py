"""Embedding lookup in Triton: one program per token, the whole feature row in one vectorized block."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < D
    row = tl.load(ids_ptr + t)
    vals = tl.load(table_ptr + row * D + cols, mask=mask)
    tl.store(out_ptr + t * D + cols, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, V: int, D: int):
        super().__init__()
        self.table = nn.Embedding(V, D)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        w = self.table.weight
        D = w.shape[1]
        out = torch.empty((ids.numel(), D), dtype=w.dtype, device=w.device)
        BLOCK_D = triton.next_power_of_2(D)
        embedding_kernel[(ids.numel(),)](ids, w, out, D, BLOCK_D=BLOCK_D, num_warps=4)
        return out
