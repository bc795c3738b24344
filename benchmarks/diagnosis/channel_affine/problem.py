"""Per-channel affine transform y = x * scale[col] + shift[col] of an fp16 activation matrix.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound broadcast elementwise: one read and one write per element plus two N-vectors.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 1024, "N": 1024}, {"M": 512, "N": 3072}]
SMOKE_CASES = [{"M": 5, "N": 48}]


class Model(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(N, dtype=torch.float16) + 0.5)
        self.shift = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale + self.shift


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs(N: int = 64, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + 2.0 * N) * 2
