"""Softmax over the last dimension of an fp32 matrix (rows of 2K-8K, attention-score sized).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read and one write per element at best.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 16384, "N": 4096}, {"M": 8192, "N": 8192}, {"M": 32768, "N": 2048}]
SMOKE_CASES = [{"M": 7, "N": 300}, {"M": 3, "N": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs(M: int = 64, N: int = 256) -> list[torch.Tensor]:
    return [torch.randn(M, N) * 3.0]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N * 4
