"""Argmax over the last dimension of a 2-D tensor: y[m] = argmax_n x[m, n] (int64 indices).

Category: argmax / top-k style ops. KernelBench origin: level1/51_Argmax_over_a_dimension (there over dim 1 of a
3-D tensor; here over the contiguous last dimension, shapes resized for an H200). Memory-bound; the reduction
carries a (value, index) pair, which lowers to a two-operand reduce.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "argmax_topk"
CASES = [
    {"M": 65536, "N": 1024},
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 8192},
    {"M": 4096, "N": 16384},
    {"M": 40000, "N": 3000},
]
SMOKE_CASES = [{"M": 8, "N": 100}, {"M": 5, "N": 300}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003}, {"M": 20011, "N": 1531}]


class Model(nn.Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**case) -> list:
    return [-1]


def flops(M: int, N: int) -> float:
    return 1.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N + 8.0 * M
