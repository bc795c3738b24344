"""A chain of elementwise steps on a small fp32 feature vector: clamp(tanh(x * s + b)^2 * c + x, -1, 1).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Small: n floats read and written; well under ten microseconds of work.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 8192}, {"n": 32768}]
SMOKE_CASES = [{"n": 300}]


class Model(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.s = nn.Parameter(torch.rand(n) + 0.5)
        self.b = nn.Parameter(torch.randn(n) * 0.1)
        self.c = nn.Parameter(torch.rand(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(torch.tanh(x * self.s + self.b) ** 2 * self.c + x, -1.0, 1.0)


def get_inputs(n: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(n)]


def get_init_inputs(n: int = 1024) -> list:
    return [n]


def flops(n: int) -> float:
    return 10.0 * n


def bytes_moved(n: int) -> float:
    return 5.0 * n * 4
