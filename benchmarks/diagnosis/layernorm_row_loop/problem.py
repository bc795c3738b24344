"""LayerNorm with a learned affine transform over a small batch of fp32 rows (a decode step).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Small and memory-bound: M*N floats read and written; a few microseconds of work at best.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 256, "N": 1024}, {"M": 128, "N": 4096}]
SMOKE_CASES = [{"M": 4, "N": 100}]


class Model(nn.Module):
    def __init__(self, N: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(N, eps=eps)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs(M: int = 8, N: int = 100) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(N: int = 100, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + 2.0 * N) * 4
