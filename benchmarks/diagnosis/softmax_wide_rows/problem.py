"""Softmax over very wide fp32 rows (a full-vocabulary distribution per token).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 32768}, {"M": 2048, "N": 50000}]
SMOKE_CASES = [{"M": 3, "N": 1000}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs(M: int = 16, N: int = 1000) -> list[torch.Tensor]:
    return [torch.randn(M, N) * 3.0]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N * 4
