"""Mean absolute error between two large fp32 tensors (an L1 loss over a whole batch).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound reduction: one read of each input, one scalar written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"N": 1 << 26}, {"N": 3 * (1 << 25) + 7}]
SMOKE_CASES = [{"N": 70001}, {"N": 4099}]
# a sum of tens of millions of terms: the accumulation order differs between implementations
TOLERANCES = {"float32": (1e-4, 1e-4)}


class Model(nn.Module):
    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return (pred - target).abs().mean()


def get_inputs(N: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs(**_) -> list:
    return []


def flops(N: int) -> float:
    return 3.0 * N


def bytes_moved(N: int) -> float:
    return 8.0 * N
