"""bf16 matrix multiplication C = A @ B with a reduction size K that is not a multiple of 16.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound at these sizes; B is scaled by 1/sqrt(K) so outputs are O(1).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 4096, "K": 3000, "dtype": "bfloat16"}, {"M": 4096, "N": 6000, "K": 5000, "dtype": "bfloat16"}]
# fp16 on CPU: the Triton interpreter's bf16 tl.dot is not reliable
SMOKE_CASES = [{"M": 40, "N": 48, "K": 72, "dtype": "float16"}, {"M": 17, "N": 24, "K": 40, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A @ B


def get_inputs(M: int = 64, N: int = 64, K: int = 72, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, K, dtype=dt), (torch.randn(K, N) / K**0.5).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, **_) -> float:
    return (M * K + K * N + M * N) * 2.0
