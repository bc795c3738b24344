"""Batched bf16 matrix multiplication C[b] = A[b] @ B[b] with fp32 accumulation.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound; B is scaled by 1/sqrt(K). The CPU smoke case uses fp16 (the Triton interpreter's bf16 dot is
not reliable).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"batch": 32, "M": 1024, "N": 1024, "K": 1024, "dtype": "bfloat16"},
         {"batch": 8, "M": 2048, "N": 2048, "K": 1024, "dtype": "bfloat16"}]
SMOKE_CASES = [{"batch": 2, "M": 40, "N": 32, "K": 48, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs(batch: int = 2, M: int = 64, N: int = 64, K: int = 64, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(batch, M, K, dtype=dt), (torch.randn(batch, K, N) / K**0.5).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(batch: int, M: int, N: int, K: int, **_) -> float:
    return 2.0 * batch * M * N * K


def bytes_moved(batch: int, M: int, N: int, K: int, **_) -> float:
    return batch * (M * K + K * N + M * N) * 2.0
