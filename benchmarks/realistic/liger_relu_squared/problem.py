"""ReLU squared, y = max(x, 0)^2 (Primer / Nemotron MLPs), row by row in the input dtype (Liger-Kernel's kernel).

Category: elementwise. Source: linkedin/Liger-Kernel src/liger_kernel/ops/relu_squared.py (see SOURCE.md).
Memory-bound: one read and one write per element; the whole row in one block.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "elementwise"
CASES = [
    {"M": 16384, "N": 16384, "dtype": "bfloat16"},
    {"M": 8192, "N": 18432, "dtype": "bfloat16"},
    {"M": 65536, "N": 4096, "dtype": "float32"},
    {"M": 32768, "N": 3000, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r = torch.relu(x)
        return r * r


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize
