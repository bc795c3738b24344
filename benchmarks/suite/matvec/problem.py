"""Matrix-vector product y = A @ x with A [M, K] and x [K, 1], in fp32.

Category: matmul variants. KernelBench origin: level1/4_Matrix_vector_multiplication_ (shapes resized for an
H200). Memory-bound: A is read once; x is small and stays in cache.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "matmul"
CASES = [
    {"M": 8192, "K": 16384},
    {"M": 16384, "K": 8192},
    {"M": 32768, "K": 4096},
    {"M": 4096, "K": 32768},
    {"M": 20000, "K": 6000},
]
SMOKE_CASES = [{"M": 8, "K": 100}, {"M": 5, "K": 2500}]
# dot products of thousands of terms: accumulation order differs between implementations
TOLERANCES = {"float32": (1e-3, 1e-4)}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, x)


def get_inputs(M: int = 1024, K: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, K: int) -> float:
    return 2.0 * M * K


def bytes_moved(M: int, K: int) -> float:
    return 4.0 * (M * K + K + M)
