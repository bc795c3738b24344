"""Embedding lookup: rows of an fp32 table gathered by token ids.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound gather: T*D elements read from the table and written out, T ids read.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"T": 4096, "V": 32000, "D": 256}, {"T": 2048, "D": 768, "V": 50000}]
SMOKE_CASES = [{"T": 6, "V": 50, "D": 40}]


class Model(nn.Module):
    def __init__(self, V: int, D: int):
        super().__init__()
        self.table = nn.Embedding(V, D)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


def get_inputs(T: int = 128, V: int = 1000, **_) -> list[torch.Tensor]:
    return [torch.randint(0, V, (T,))]


def get_init_inputs(V: int = 1000, D: int = 64, **_) -> list:
    return [V, D]


def flops(T: int, D: int, **_) -> float:
    return float(T * D)


def bytes_moved(T: int, D: int, **_) -> float:
    return 2.0 * T * D * 4 + 8.0 * T
