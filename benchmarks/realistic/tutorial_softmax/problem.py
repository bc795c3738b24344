"""Row softmax over the last dimension, fp32 (the Triton tutorial 02-fused-softmax kernel, persistent programs).

Category: softmax. Source: triton-lang/triton python/tutorials/02-fused-softmax.py (see SOURCE.md).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "softmax"
CASES = [
    {"M": 32768, "N": 4096, "dtype": "float32"},
    {"M": 16384, "N": 8192, "dtype": "float32"},
    {"M": 131072, "N": 1024, "dtype": "float32"},
    {"M": 8192, "N": 12000, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 6, "N": 300, "dtype": "float32"}, {"M": 17, "N": 128, "dtype": "float32"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.float(), dim=-1).to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize
