"""Hinge loss with +-1 targets, mean over all elements: mean(clamp(1 - predictions * targets, min=0)).

Category: losses. KernelBench origin: level1/100_HingeLoss (there the targets broadcast per sample; here they
match the predictions element for element, shapes sized for an H200). Memory-bound: two reads per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "loss"
CASES = [
    {"M": 8192, "N": 8192},
    {"M": 16384, "N": 16384},
    {"M": 32768, "N": 4096},
    {"M": 65536, "N": 2048},
    {"M": 10007, "N": 9973},
]
SMOKE_CASES = [{"M": 8, "N": 100}, {"M": 5, "N": 2500}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003}, {"M": 20011, "N": 1531}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N), torch.randint(0, 2, (M, N)).float() * 2 - 1]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 3.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N
