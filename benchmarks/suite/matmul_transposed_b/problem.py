"""Matrix multiplication with a transposed right operand, C = A @ B.T, in half precision (fp32 accumulation).

A is [M, K] and B is [N, K] (the nn.Linear weight layout). Category: matmul variants. KernelBench origin:
level1/17_Matmul_with_transposed_B (fp32 there; here fp16 and bf16, shapes sized for an H200). Compute-bound.
B is scaled by 1/sqrt(K) so outputs are O(1) and one tolerance means the same thing for every size.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "matmul"
CASES = [
    {"M": 4096, "N": 4096, "K": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "K": 2048, "dtype": "bfloat16"},
    {"M": 1024, "N": 16384, "K": 4096, "dtype": "float16"},
    {"M": 3000, "N": 5000, "K": 4000, "dtype": "bfloat16"},
    {"M": 2048, "N": 8192, "K": 8192, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 64, "N": 48, "K": 80, "dtype": "float16"}, {"M": 100, "N": 70, "K": 50, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


def get_inputs(M: int = 1024, N: int = 1024, K: int = 1024, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, K, dtype=dt), (torch.randn(N, K) / K**0.5).to(dt)]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, dtype: str = "bfloat16") -> float:
    return (M * K + N * K + M * N) * getattr(torch, dtype).itemsize
