"""Embedding lookup out[t] = weight[idx[t]] (Liger-Kernel's experimental kernel, 128x128 tiles of tokens x dims).

Category: gather. Source: linkedin/Liger-Kernel src/liger_kernel/ops/experimental/embedding.py (SOURCE.md).
Memory-bound: each selected row is read once and written once; int64 indices.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "gather"
CASES = [
    {"V": 128256, "D": 4096, "T": 65536, "dtype": "bfloat16"},
    {"V": 32000, "D": 4096, "T": 32768, "dtype": "float32"},
    {"V": 151936, "D": 3584, "T": 65536, "dtype": "bfloat16"},
    {"V": 50257, "D": 768, "T": 262144, "dtype": "float16"},
]
SMOKE_CASES = [{"V": 50, "D": 200, "T": 37, "dtype": "float32"}, {"V": 20, "D": 64, "T": 9, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, V: int = 1024, D: int = 256, dtype: str = "float32"):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(V, D).to(getattr(torch, dtype)))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return self.weight[indices]


def get_inputs(V: int = 1024, D: int = 256, T: int = 512, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randint(0, V, (T,))]


def get_init_inputs(V: int = 1024, D: int = 256, dtype: str = "float32", **_) -> list:
    return [V, D, dtype]


def flops(T: int, D: int, **_) -> float:
    return 1.0 * T * D


def bytes_moved(T: int, D: int, dtype: str = "float32", **_) -> float:
    return 2.0 * T * D * getattr(torch, dtype).itemsize + 8.0 * T
