"""Sum of every element of a large fp32 tensor (a scalar result).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound full reduction: n floats read, one written. Inputs have mean 0.25 so the sum is well conditioned.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 26}, {"n": 1 << 24}]
SMOKE_CASES = [{"n": 3000}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum()


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.rand(n) - 0.25]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return float(n)


def bytes_moved(n: int) -> float:
    return 4.0 * n
