"""Embedding lookup in Triton: one program per output element (token t, feature d)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, table_ptr, out_ptr, D):
    pid = tl.program_id(0)
    t = pid // D
    d = pid % D
    row = tl.load(ids_ptr + t)
    tl.store(out_ptr + pid, tl.load(table_ptr + row * D + d))


class ModelNew(nn.Module):
    def __init__(self, V: int, D: int):
        super().__init__()
        self.table = nn.Embedding(V, D)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        w = self.table.weight
        D = w.shape[1]
        out = torch.empty((ids.numel(), D), dtype=w.dtype, device=w.device)
        embedding_kernel[(ids.numel() * D,)](ids, w, out, D, num_warps=1)
        return out
