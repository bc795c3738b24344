"""Batched fp32 matrix multiplication C[b] = A[b] @ B[b].

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound; B is scaled by 1/sqrt(K) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"batch": 16, "M": 1024, "N": 1024, "K": 1024}, {"batch": 64, "M": 512, "N": 512, "K": 1024}]
SMOKE_CASES = [{"batch": 2, "M": 24, "N": 40, "K": 48}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs(batch: int = 2, M: int = 64, N: int = 64, K: int = 64) -> list[torch.Tensor]:
    return [torch.randn(batch, M, K), torch.randn(batch, K, N) / K**0.5]


def get_init_inputs(**_) -> list:
    return []


def flops(batch: int, M: int, N: int, K: int) -> float:
    return 2.0 * batch * M * N * K


def bytes_moved(batch: int, M: int, N: int, K: int) -> float:
    return batch * (M * K + K * N + M * N) * 4.0
