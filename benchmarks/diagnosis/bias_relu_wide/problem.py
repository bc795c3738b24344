"""relu(x + bias) over an fp32 activation matrix whose width is not a multiple of 16.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound broadcast elementwise: one read and one write per element plus the bias vector.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 16384, "N": 3000}, {"M": 8192, "N": 5000}, {"M": 12288, "N": 4100}]
SMOKE_CASES = [{"M": 5, "N": 300}, {"M": 3, "N": 70}]


class Model(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias)


def get_inputs(M: int = 64, N: int = 300) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(N: int = 300, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + N) * 4
