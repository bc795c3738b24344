"""alpha * x + beta * y on bf16 tensors, with alpha and beta fixed at construction.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound elementwise: two reads and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 21}, {"n": 1_000_000}]
SMOKE_CASES = [{"n": 257}]


class Model(nn.Module):
    def __init__(self, alpha: float = 0.75, beta: float = -1.25):
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (self.alpha * x.float() + self.beta * y.float()).to(x.dtype)


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(n, dtype=torch.bfloat16), torch.randn(n, dtype=torch.bfloat16)]


def get_init_inputs(**_) -> list:
    return [0.75, -1.25]


def flops(n: int) -> float:
    return 3.0 * n


def bytes_moved(n: int) -> float:
    return 3.0 * n * 2
