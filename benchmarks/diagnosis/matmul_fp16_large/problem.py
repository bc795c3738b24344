"""fp16 matrix multiplication C = A @ B with fp32 accumulation at large square and rectangular sizes.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound; B is scaled by 1/sqrt(K) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 8192, "K": 4096}]
SMOKE_CASES = [{"M": 300, "N": 100, "K": 48}]  # 3 tile rows: one partial program group


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs(M: int = 64, N: int = 64, K: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16), (torch.randn(K, N) / K**0.5).to(torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return (M * K + K * N + M * N) * 2.0
