"""Mean squared error loss between two fp32 tensors (mean reduction, a scalar).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound full reduction: 2n floats read, one written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 25}, {"n": 1 << 23}]
SMOKE_CASES = [{"n": 2500}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.mse_loss(pred, target)


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return 3.0 * n


def bytes_moved(n: int) -> float:
    return 8.0 * n
