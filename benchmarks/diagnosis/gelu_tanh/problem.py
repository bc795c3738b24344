"""GELU (tanh approximation) of a flat fp32 activation vector.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound elementwise: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 1 << 20}, {"n": 3 << 19}]
SMOKE_CASES = [{"n": 300}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(x, approximate="tanh")


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(n) * 3.0]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return 10.0 * n


def bytes_moved(n: int) -> float:
    return 2.0 * n * 4
