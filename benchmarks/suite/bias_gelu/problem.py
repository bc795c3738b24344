"""Bias add then GELU: y = gelu(x + bias), with a learned bias broadcast along the rows.

Category: fusions without convolution. KernelBench origin: the epilogue of level2 Gemm chains (e.g.
level2/99_Matmul_GELU_Softmax), on its own; the bias-GELU of transformer MLPs. Eager runs two kernels; fused it is
memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "fusion"
CASES = [
    {"M": 8192, "N": 8192, "dtype": "float32"},
    {"M": 65536, "N": 2048, "dtype": "float32"},
    {"M": 12289, "N": 7919, "dtype": "float32"},
    {"M": 32768, "N": 8192, "dtype": "float32"},
    {"M": 16384, "N": 16384, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 8, "N": 100, "dtype": "float32"}, {"M": 5, "N": 77, "dtype": "bfloat16"}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003, "dtype": "float32"}, {"M": 20011, "N": 1531, "dtype": "bfloat16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float32"):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(x + self.bias)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float32") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 9.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (2.0 * M * N + N) * getattr(torch, dtype).itemsize
