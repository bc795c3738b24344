"""Smooth L1 (Huber, beta = 1) loss, mean over all elements: F.smooth_l1_loss(predictions, targets).

Category: losses. KernelBench origin: level1/96_HuberLoss (shapes resized for an H200). Memory-bound: two reads
per element, a scalar out.
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
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N
