"""Column sums of a tall fp32 matrix (sum over the rows, one value per column).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: every element read once.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 16384, "N": 8960}, {"M": 24576, "N": 4480}, {"M": 8192, "N": 8960}]
SMOKE_CASES = [{"M": 67, "N": 200}, {"M": 9, "N": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0)


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return float(M * N)


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * (M * N + N)
