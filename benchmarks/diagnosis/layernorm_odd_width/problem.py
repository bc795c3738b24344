"""LayerNorm with a learned affine transform over an fp32 hidden size that is not a multiple of 16.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound norm: one read and one write per element, a mean and a variance per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 1000}, {"M": 16384, "N": 3000}]
SMOKE_CASES = [{"M": 6, "N": 200}, {"M": 3, "N": 60}]


class Model(nn.Module):
    def __init__(self, N: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(N, eps=eps)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs(M: int = 64, N: int = 200) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(N: int = 200, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + 2.0 * N) * 4
