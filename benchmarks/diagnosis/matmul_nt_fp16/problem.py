"""C = A @ B^T in fp16 for a tall A (many rows) and a square B: a projection of many tokens.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound; B is scaled by 1/sqrt(K) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 32768, "N": 1024, "K": 1024}, {"M": 16384, "N": 2048, "K": 2048}]
SMOKE_CASES = [{"M": 50, "N": 32, "K": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B.T


def get_inputs(M: int = 64, N: int = 64, K: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16), (torch.randn(N, K) / K**0.5).to(torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return (M * K + N * K + M * N) * 2.0
