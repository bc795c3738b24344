"""Batched matrix multiplication C[b] = A[b] @ B[b] in half precision (fp32 accumulation).

Category: matmul variants. KernelBench origin: level1/3_Batched_matrix_multiplication (fp32 there; here fp16 and
bf16, shapes sized for an H200). Compute-bound.
B is scaled by 1/sqrt(K) so outputs are O(1) and one tolerance means the same thing for every size.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "matmul"
CASES = [
    {"B": 32, "M": 1024, "N": 1024, "K": 1024, "dtype": "bfloat16"},
    {"B": 16, "M": 2048, "N": 2048, "K": 2048, "dtype": "float16"},
    {"B": 128, "M": 512, "N": 512, "K": 1024, "dtype": "bfloat16"},
    {"B": 8, "M": 4096, "N": 4096, "K": 1024, "dtype": "bfloat16"},
    {"B": 24, "M": 1000, "N": 1500, "K": 1200, "dtype": "float16"},
]
SMOKE_CASES = [
    {"B": 2, "M": 64, "N": 48, "K": 40, "dtype": "float16"},
    {"B": 3, "M": 33, "N": 70, "K": 20, "dtype": "float16"},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs(B: int = 4, M: int = 512, N: int = 512, K: int = 512, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(B, M, K, dtype=dt), (torch.randn(B, K, N) / K**0.5).to(dt)]


def get_init_inputs(**case) -> list:
    return []


def flops(B: int, M: int, N: int, K: int, **_) -> float:
    return 2.0 * B * M * N * K


def bytes_moved(B: int, M: int, N: int, K: int, dtype: str = "bfloat16") -> float:
    return B * (M * K + K * N + M * N) * getattr(torch, dtype).itemsize
