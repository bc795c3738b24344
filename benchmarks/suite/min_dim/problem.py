"""Minimum over the middle dimension of a 3-D tensor: y[b, j] = min_i x[b, i, j] (values only).

Category: reductions, norms, softmax and log-softmax. KernelBench origin: level1/53_Min_reduction_over_a_dimension
(dim=1; shapes resized for an H200). Memory-bound: the input is read once, the output is small.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "reduction"
CASES = [
    {"B": 128, "D1": 4096, "D2": 256},
    {"B": 64, "D1": 8192, "D2": 512},
    {"B": 1024, "D1": 1024, "D2": 128},
    {"B": 16, "D1": 16384, "D2": 1024},
    {"B": 300, "D1": 2000, "D2": 333},
]
SMOKE_CASES = [{"B": 2, "D1": 30, "D2": 20}, {"B": 3, "D1": 17, "D2": 45}]


class Model(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim)[0]


def get_inputs(B: int = 16, D1: int = 256, D2: int = 256) -> list[torch.Tensor]:
    return [torch.randn(B, D1, D2)]


def get_init_inputs(**case) -> list:
    return [1]


def flops(B: int, D1: int, D2: int) -> float:
    return 1.0 * B * D1 * D2


def bytes_moved(B: int, D1: int, D2: int) -> float:
    return 4.0 * (B * D1 * D2 + B * D2)
