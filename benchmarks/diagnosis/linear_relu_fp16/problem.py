"""relu(x @ W^T + b): an fp16 linear layer followed by ReLU.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound: 2*M*N*K flops; weights drawn by nn.Linear, so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 4096, "K": 4096}, {"M": 4096, "N": 8192, "K": 2048}]
SMOKE_CASES = [{"M": 24, "N": 40, "K": 64}]


class Model(nn.Module):
    def __init__(self, K: int, N: int):
        super().__init__()
        self.fc = nn.Linear(K, N).to(torch.float16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def get_inputs(M: int = 64, K: int = 64, **_) -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs(K: int = 64, N: int = 64, **_) -> list:
    return [K, N]


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return (M * K + N * K + M * N) * 2.0
