"""Square fp16 matrix multiplication C = A @ B with fp32 accumulation.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound; B is scaled by 1/sqrt(N) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"N": 4096}, {"N": 6144}]
SMOKE_CASES = [{"N": 72}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs(N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(N, N, dtype=torch.float16), (torch.randn(N, N) / N**0.5).to(torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(N: int) -> float:
    return 2.0 * N**3


def bytes_moved(N: int) -> float:
    return 3.0 * N * N * 2
