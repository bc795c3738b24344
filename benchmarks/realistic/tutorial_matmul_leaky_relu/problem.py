"""fp16 matmul with a fused leaky_relu epilogue: C = leaky_relu(A @ B, 0.01) (the Triton tutorial 03 kernel).

Category: matmul. Source: triton-lang/triton python/tutorials/03-matrix-multiplication.py (see SOURCE.md).
Compute-bound at these sizes: fp16 tensor-core dots with fp32 accumulation, fp16 output.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "matmul"
CASES = [
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 2048},
    {"M": 16384, "N": 1024, "K": 4096},
    {"M": 3000, "N": 5000, "K": 4096},
]
SMOKE_CASES = [{"M": 48, "N": 40, "K": 72}, {"M": 33, "N": 64, "K": 32}]
TOLERANCES = {"float16": {"atol": 2e-2, "rtol": 1e-2}}


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(a.float() @ b.float(), 0.01).to(torch.float16)


def get_inputs(M: int = 512, N: int = 512, K: int = 512) -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return 2.0 * (M * K + K * N + M * N)
