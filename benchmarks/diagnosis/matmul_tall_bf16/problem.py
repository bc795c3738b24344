"""Projection of a very tall bf16 activation matrix, C = A @ B (A: many rows x K, B: K x N).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-heavy matmul with one operand of hundreds of MB; the second operand is scaled by
1/sqrt(K) so outputs are O(1).
The CPU smoke case uses fp16 (the Triton interpreter's bf16 dot is not reliable).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 4096, "K": 2048, "dtype": "bfloat16"}, {"M": 32768, "N": 8192, "K": 1024, "dtype": "bfloat16"}]
SMOKE_CASES = [{"M": 80, "N": 300, "K": 32, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs(M: int = 64, N: int = 64, K: int = 64, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, K, dtype=dt), (torch.randn(K, N) / K**0.5).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, **_) -> float:
    return (M * K + K * N + M * N) * 2.0
