"""y = alpha * x for a large flat fp32 tensor (alpha fixed at construction).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound elementwise: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 26}, {"n": 50_000_000}]
SMOKE_CASES = [{"n": 5000}]


class Model(nn.Module):
    def __init__(self, alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.alpha


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(n)]


def get_init_inputs(**_) -> list:
    return [0.5]


def flops(n: int) -> float:
    return float(n)


def bytes_moved(n: int) -> float:
    return 8.0 * n
