"""Inclusive prefix sum along the rows of a 2-D tensor: y[m, n] = sum_{j <= n} x[m, j].

Category: scans. KernelBench origin: level1/89_cumsum (shapes resized for an H200). Memory-bound: one read and
one write per element; the scan runs along each row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "scan"
CASES = [
    {"M": 65536, "N": 1024},
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 8192},
    {"M": 32768, "N": 3000},
    {"M": 4096, "N": 16384},
]
SMOKE_CASES = [{"M": 8, "N": 100}, {"M": 5, "N": 300}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003}, {"M": 20011, "N": 1531}]
# long running sums/products: accumulation order differs between implementations
TOLERANCES = {"float32": (1e-3, 1e-3)}


class Model(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**case) -> list:
    return [1]


def flops(M: int, N: int) -> float:
    return 1.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 8.0 * M * N
