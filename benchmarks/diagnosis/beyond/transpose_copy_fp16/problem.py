"""Materialised transpose of an fp16 matrix, y = x.T (contiguous).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192}, {"M": 4096, "N": 16384}]
SMOKE_CASES = [{"M": 40, "N": 72}, {"M": 16, "N": 16}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return float(M * N)


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N
