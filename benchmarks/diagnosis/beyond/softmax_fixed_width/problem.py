"""Row softmax of an fp32 matrix whose rows hold 1500-1800 values (vocabulary shards, wide attention rows).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 1500}, {"M": 32768, "N": 1800}, {"M": 16384, "N": 1700}]
SMOKE_CASES = [{"M": 7, "N": 150}, {"M": 3, "N": 37}]


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
