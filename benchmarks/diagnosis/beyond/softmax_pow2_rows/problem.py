"""Row softmax of fp32 logits whose rows hold a power-of-two number of values (1024-4096).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 32768, "N": 4096}, {"M": 65536, "N": 1024}]
SMOKE_CASES = [{"M": 5, "N": 128}, {"M": 3, "N": 64}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs(M: int = 8, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N) * 2.0]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N
