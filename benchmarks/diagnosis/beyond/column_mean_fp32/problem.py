"""Column means of a square-ish fp32 matrix (mean over the rows).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: every element read once.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192}, {"M": 16384, "N": 2048}]
SMOKE_CASES = [{"M": 50, "N": 70}, {"M": 16, "N": 8}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=0)


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return float(M * N)


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * (M * N + N)
