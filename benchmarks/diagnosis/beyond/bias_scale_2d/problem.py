"""y = (x + bias) * scale over an fp32 matrix with a per-column bias and a per-row scale.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 16384, "N": 8192}, {"M": 8192, "N": 12288}]
SMOKE_CASES = [{"M": 70, "N": 130}, {"M": 5, "N": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, bias: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        return (x + bias[None, :]) * scale[:, None]


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N), torch.randn(N), torch.rand(M) + 0.5]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N + 4.0 * (M + N)
