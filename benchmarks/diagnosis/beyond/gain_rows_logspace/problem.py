"""y = x * exp(log_gain) with a per-column gain kept in log space, over an fp32 matrix.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 2048}, {"M": 16384, "N": 4096}]
SMOKE_CASES = [{"M": 35, "N": 100}, {"M": 8, "N": 64}]


class Model(nn.Module):
    def __init__(self, N: int = 64):
        super().__init__()
        self.log_gain = nn.Parameter(0.1 * torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.exp(self.log_gain)[None, :]


def get_inputs(M: int = 8, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(M: int = 8, N: int = 64) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N + 4.0 * N
