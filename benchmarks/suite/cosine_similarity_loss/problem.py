"""Cosine similarity loss: mean over rows of 1 - cos(predictions[m], targets[m]) along dim 1.

Category: losses. KernelBench origin: level1/97_CosineSimilarityLoss (shapes resized for an H200). Memory-bound:
two reads per element, three dot products per row, a scalar out.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "loss"
CASES = [
    {"M": 65536, "N": 1024},
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 8192},
    {"M": 4096, "N": 16384},
    {"M": 32768, "N": 3000},
]
SMOKE_CASES = [{"M": 8, "N": 128}, {"M": 5, "N": 300}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003}, {"M": 20011, "N": 1531}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        cosine_sim = torch.nn.functional.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine_sim)


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 6.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N
