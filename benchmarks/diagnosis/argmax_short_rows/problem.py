"""Argmax over short fp16 rows (class of the best of a handful of logits).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: M*N halves read, M int64 indices written; ties resolve to the first index.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 1 << 20, "N": 16}, {"M": 1 << 19, "N": 40}]
SMOKE_CASES = [{"M": 23, "N": 16}, {"M": 7, "N": 40}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=-1)


def get_inputs(M: int = 64, N: int = 16) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return float(M * N)


def bytes_moved(M: int, N: int) -> float:
    return M * N * 2.0 + M * 8.0
