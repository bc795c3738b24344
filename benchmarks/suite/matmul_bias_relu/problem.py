"""GEMM + bias + ReLU: y = relu(x @ W.T + bias), a bias-free nn.Linear followed by a bias add and ReLU.

Category: fusions without convolution. KernelBench origin: level2/76_Gemm_Add_ReLU (fp32 there; here fp16 and
bf16, shapes sized for an H200). Compute-bound; eager runs the GEMM, the add and the ReLU as three kernels.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "fusion"
CASES = [
    {"M": 4096, "K": 4096, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "K": 4096, "N": 8192, "dtype": "bfloat16"},
    {"M": 16384, "K": 1024, "N": 4096, "dtype": "float16"},
    {"M": 2048, "K": 8192, "N": 8192, "dtype": "bfloat16"},
    {"M": 5000, "K": 3000, "N": 6000, "dtype": "float16"},
]
SMOKE_CASES = [
    {"M": 64, "K": 80, "N": 48, "dtype": "float16"},
    {"M": 100, "K": 50, "N": 70, "dtype": "float16"},
]


class Model(nn.Module):
    def __init__(self, K: int, N: int, dtype: str = "bfloat16"):
        super().__init__()
        self.gemm = nn.Linear(K, N, bias=False)
        self.bias = nn.Parameter(torch.randn(N))
        self.to(getattr(torch, dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.gemm(x) + self.bias)


def get_inputs(M: int = 1024, K: int = 1024, N: int = 1024, dtype: str = "bfloat16") -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=getattr(torch, dtype))]


def get_init_inputs(K: int = 1024, N: int = 1024, dtype: str = "bfloat16") -> list:
    return [K, N, dtype]


def flops(M: int, K: int, N: int, **_) -> float:
    return 2.0 * M * N * K + 2.0 * M * N


def bytes_moved(M: int, K: int, N: int, dtype: str = "bfloat16") -> float:
    return (M * K + N * K + M * N + N) * getattr(torch, dtype).itemsize
