"""Output projection onto a large vocabulary, C = A @ B in fp16 (A: tokens x hidden, B: hidden x vocab).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-heavy matmul with one operand of hundreds of MB; the second operand is scaled by
1/sqrt(K) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 32000, "K": 4096, "dtype": "float16"}, {"M": 2048, "N": 65536, "K": 2048, "dtype": "float16"}]
SMOKE_CASES = [{"M": 1157, "N": 72, "K": 48, "dtype": "float16"}]  # 10 tile rows: two groups, the last partial


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs(M: int = 64, N: int = 64, K: int = 64, dtype: str = "float16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, K, dtype=dt), (torch.randn(K, N) / K**0.5).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, **_) -> float:
    return (M * K + K * N + M * N) * 2.0
