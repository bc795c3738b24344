"""Symmetrised degree of a batch of dense fp32 adjacency matrices: out[b, i] = sum_j A[b, i, j] + sum_j A[b, j, i].

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: every element read twice (once per direction).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"B": 16, "N": 4096}, {"B": 64, "N": 2048}]
SMOKE_CASES = [{"B": 2, "N": 100}, {"B": 1, "N": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A.sum(dim=2) + A.sum(dim=1)


def get_inputs(B: int = 2, N: int = 64) -> list[torch.Tensor]:
    return [torch.rand(B, N, N)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, N: int) -> float:
    return 2.0 * B * N * N


def bytes_moved(B: int, N: int) -> float:
    return 4.0 * B * N * N + 4.0 * B * N
