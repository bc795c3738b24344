"""Square matrix multiplication C = A @ B in half precision (fp32 accumulation).

Category: matmul variants. KernelBench origin: level1/1_Square_matrix_multiplication_ (fp32 there; here fp16 and
bf16, the precisions tensor cores serve, with shapes sized for an H200). Compute-bound.
B is scaled by 1/sqrt(N) so outputs are O(1) and one tolerance means the same thing for every size.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "matmul"
CASES = [
    {"N": 4096, "dtype": "bfloat16"},
    {"N": 8192, "dtype": "bfloat16"},
    {"N": 6144, "dtype": "float16"},
    {"N": 5000, "dtype": "bfloat16"},
    {"N": 4096, "dtype": "float16"},
]
SMOKE_CASES = [{"N": 64, "dtype": "float16"}, {"N": 100, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs(N: int = 1024, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(N, N, dtype=dt), (torch.randn(N, N) / N**0.5).to(dt)]


def get_init_inputs(**case) -> list:
    return []


def flops(N: int, **_) -> float:
    return 2.0 * N**3


def bytes_moved(N: int, dtype: str = "bfloat16") -> float:
    return 3.0 * N * N * getattr(torch, dtype).itemsize
