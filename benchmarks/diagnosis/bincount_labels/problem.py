"""Class histogram of integer labels (torch.bincount with a fixed number of classes).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound in principle: n int64 labels read, C counts written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 24, "C": 16}, {"n": 1 << 23, "C": 64}]
SMOKE_CASES = [{"n": 2000, "C": 16}, {"n": 700, "C": 5}]


class Model(nn.Module):
    def __init__(self, C: int):
        super().__init__()
        self.C = C

    def forward(self, labels: torch.Tensor) -> torch.Tensor:
        return torch.bincount(labels, minlength=self.C)


def get_inputs(n: int = 4096, C: int = 16) -> list[torch.Tensor]:
    # skewed classes, as in real label streams: class c has weight 1 / (c + 1)
    probs = 1.0 / torch.arange(1, C + 1, dtype=torch.float32)
    return [torch.multinomial(probs, n, replacement=True)]


def get_init_inputs(C: int = 16, **_) -> list:
    return [C]


def flops(n: int, **_) -> float:
    return float(n)


def bytes_moved(n: int, C: int) -> float:
    return 8.0 * n + 8.0 * C
