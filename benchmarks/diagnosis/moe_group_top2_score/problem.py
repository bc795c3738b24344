"""Grouped expert scoring for MoE routing: per token and expert group, the sum of the group's two largest scores.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound: T*E fp32 scores read, T*G sums written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"T": 65536, "E": 256, "G": 8}, {"T": 32768, "E": 128, "G": 16}]
SMOKE_CASES = [{"T": 5, "E": 64, "G": 4}]


class Model(nn.Module):
    def __init__(self, G: int):
        super().__init__()
        self.G = G

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        T, E = scores.shape
        return scores.view(T, self.G, E // self.G).topk(2, dim=-1).values.sum(-1)


def get_inputs(T: int = 64, E: int = 64, **_) -> list[torch.Tensor]:
    return [torch.rand(T, E)]


def get_init_inputs(G: int = 4, **_) -> list:
    return [G]


def flops(T: int, E: int, **_) -> float:
    return 3.0 * T * E


def bytes_moved(T: int, E: int, G: int) -> float:
    return (T * E + T * G) * 4.0
