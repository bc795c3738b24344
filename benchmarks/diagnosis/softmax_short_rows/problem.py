"""Softmax over the last dimension of an fp32 matrix with short rows (attention over a few keys).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 262144, "N": 64}, {"M": 524288, "N": 32}, {"M": 131072, "N": 100}]
SMOKE_CASES = [{"M": 37, "N": 64}, {"M": 9, "N": 20}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N) * 2.0]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N * 4
