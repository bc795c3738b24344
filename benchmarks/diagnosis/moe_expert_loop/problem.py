"""Per-expert projection of routed tokens: out[e] = x[e] @ W[e] for E experts with a small token capacity.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Small matmuls: 2*E*C*D*F flops in all, a few microseconds per expert; W is scaled by 1/sqrt(D).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"E": 64, "C": 16, "D": 512, "F": 512}, {"E": 128, "C": 8, "D": 256, "F": 1024}]
SMOKE_CASES = [{"E": 3, "C": 5, "D": 32, "F": 48}]


class Model(nn.Module):
    def __init__(self, E: int, D: int, F: int):
        super().__init__()
        self.W = nn.Parameter((torch.randn(E, D, F) / D**0.5).to(torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bmm(x, self.W)


def get_inputs(E: int = 4, C: int = 8, D: int = 64, **_) -> list[torch.Tensor]:
    return [torch.randn(E, C, D, dtype=torch.float16)]


def get_init_inputs(E: int = 4, D: int = 64, F: int = 64, **_) -> list:
    return [E, D, F]


def flops(E: int, C: int, D: int, F: int) -> float:
    return 2.0 * E * C * D * F


def bytes_moved(E: int, C: int, D: int, F: int) -> float:
    return E * (C * D + D * F + C * F) * 2.0
