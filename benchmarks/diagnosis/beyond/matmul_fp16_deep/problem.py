"""fp16 matrix multiplication C = A @ B with fp32 accumulation (fp16 output).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Compute-bound on tensor cores for the full-size cases.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 4096, "K": 4096}, {"M": 8192, "N": 4096, "K": 2048}, {"M": 2048, "N": 8192, "K": 4096}]
SMOKE_CASES = [{"M": 64, "N": 96, "K": 80}, {"M": 33, "N": 40, "K": 64}]
TOLERANCES = {"float16": {"atol": 2e-2, "rtol": 2e-2}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a.float() @ b.float()).half()


def get_inputs(M: int = 64, N: int = 64, K: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, K).half(), torch.randn(K, N).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return 2.0 * (M * K + K * N + M * N)
