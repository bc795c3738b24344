"""Inner product of two long fp32 vectors (torch.dot).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound reduction: one read of each input, one scalar written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"N": 1 << 27}, {"N": 50_000_017}]
SMOKE_CASES = [{"N": 100003}, {"N": 777}]
# a sum of up to 134M products: the accumulation order differs between implementations
TOLERANCES = {"float32": (1e-2, 1e-4)}


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.dot(x, y)


def get_inputs(N: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(N), torch.randn(N)]


def get_init_inputs(**_) -> list:
    return []


def flops(N: int) -> float:
    return 2.0 * N


def bytes_moved(N: int) -> float:
    return 8.0 * N
