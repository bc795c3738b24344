"""Tanh, elementwise: y = tanh(x).

Category: elementwise and activations. KernelBench origin: level1/22_Tanh (shapes resized for an H200).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "elementwise"
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
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize
