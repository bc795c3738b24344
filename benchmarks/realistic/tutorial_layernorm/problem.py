"""LayerNorm over the last dimension with weight and bias (the Triton tutorial 05-layer-norm forward kernel).

Category: norm. Source: triton-lang/triton python/tutorials/05-layer-norm.py (see SOURCE.md).
Memory-bound: one read and one write per element; the kernel reads each row three times and stores fp32 mean and rstd.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "norm"
CASES = [
    {"M": 65536, "N": 1024, "dtype": "float32"},
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "dtype": "float16"},
    {"M": 32768, "N": 3000, "dtype": "float32"},
]
SMOKE_CASES = [
    {"M": 8, "N": 128, "dtype": "float32"},
    {"M": 5, "N": 300, "dtype": "float16"},
    {"M": 3, "N": 20000, "dtype": "float16"},
]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float32", eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))
        self.bias = nn.Parameter(torch.empty(N).uniform_(-0.5, 0.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.layer_norm(x.float(), (x.shape[-1],), self.weight.float(), self.bias.float(), self.eps)
        return y.to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float32") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (2.0 * M * N + 2.0 * N) * getattr(torch, dtype).itemsize + 8.0 * M
