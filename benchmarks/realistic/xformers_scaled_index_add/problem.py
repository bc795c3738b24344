"""In-place scaled index add (xFormers, used for stochastic depth): x[index] += alpha * scaling * source.

Category: gather. Source: facebookresearch/xformers xformers/ops/_triton/k_scaled_index_add.py (SOURCE.md).
x (N, R, C) is updated in place (INPLACE_OUTPUTS) at unique indices; scaling is a per-channel (C,) parameter.
Memory-bound: the selected slices of x are read and written, source read once.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "gather"
INPLACE_OUTPUTS = [0]
CASES = [
    {"N": 256, "R": 1024, "C": 1024, "n": 128, "dtype": "bfloat16"},
    {"N": 64, "R": 4096, "C": 1024, "n": 48, "dtype": "float32"},
    {"N": 512, "R": 256, "C": 2048, "n": 256, "dtype": "float16"},
    {"N": 128, "R": 2048, "C": 768, "n": 100, "dtype": "bfloat16"},
]
SMOKE_CASES = [
    {"N": 6, "R": 3, "C": 600, "n": 4, "dtype": "float32"},
    {"N": 5, "R": 2, "C": 64, "n": 2, "dtype": "float16"},
]


class Model(nn.Module):
    def __init__(self, C: int = 1024, dtype: str = "float32", alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha
        self.scaling = nn.Parameter(torch.empty(C).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor, index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        upd = x[index].float() + self.alpha * self.scaling.float() * source.float()
        x[index] = upd.to(x.dtype)
        return x


def get_inputs(N: int = 64, R: int = 256, C: int = 1024, n: int = 32, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(N, R, C, dtype=dt), torch.randperm(N)[:n], torch.randn(n, R, C, dtype=dt)]


def get_init_inputs(C: int = 1024, dtype: str = "float32") -> list:
    return [C, dtype, 0.5]


def flops(n: int, R: int, C: int, **_) -> float:
    return 3.0 * n * R * C


def bytes_moved(n: int, R: int, C: int, dtype: str = "float32", **_) -> float:
    return 3.0 * n * R * C * getattr(torch, dtype).itemsize
