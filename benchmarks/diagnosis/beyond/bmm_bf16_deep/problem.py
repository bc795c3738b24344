"""Batched bf16 matrix multiplication C[b] = A[b] @ B[b] with fp32 accumulation.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Compute-bound on tensor cores. The CPU smoke cases use fp16 (the interpreter's bf16 dot is not reliable).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"batch": 16, "M": 2048, "N": 2048, "K": 1024, "dtype": "bfloat16"},
         {"batch": 64, "M": 1024, "N": 1024, "K": 512, "dtype": "bfloat16"}]
SMOKE_CASES = [{"batch": 2, "M": 40, "N": 48, "K": 64, "dtype": "float16"}]
TOLERANCES = {"float16": {"atol": 2e-2, "rtol": 2e-2}, "bfloat16": {"atol": 5e-2, "rtol": 5e-2}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A.float(), B.float()).to(A.dtype)


def get_inputs(batch: int = 2, M: int = 64, N: int = 64, K: int = 64, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(batch, M, K).to(dt), (torch.randn(batch, K, N) / K**0.5).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(batch: int, M: int, N: int, K: int, **_) -> float:
    return 2.0 * batch * M * N * K


def bytes_moved(batch: int, M: int, N: int, K: int, **_) -> float:
    return batch * (M * K + K * N + M * N) * 2.0
