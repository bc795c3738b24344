"""LayerNorm with a learned affine transform over a very wide bf16 hidden size.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound norm: one read and one write per element; statistics in fp32.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 16384}, {"M": 4096, "N": 32768}]
SMOKE_CASES = [{"M": 3, "N": 2000}]


class Model(nn.Module):
    def __init__(self, N: int, eps: float = 1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(N, eps=eps)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self.norm.to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def get_inputs(M: int = 16, N: int = 2000) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(N: int = 2000, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + 2.0 * N) * 2
