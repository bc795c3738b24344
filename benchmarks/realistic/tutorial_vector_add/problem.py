"""Elementwise add of two flat vectors (the Triton tutorial 01-vector-add kernel), fp32.

Category: elementwise. Source: triton-lang/triton python/tutorials/01-vector-add.py (see SOURCE.md).
Memory-bound: two reads and one write per element; 1024 elements per program, default warps.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "elementwise"
CASES = [{"n": 2**28}, {"n": 2**26}, {"n": 100_000_007}, {"n": 2**29}]
SMOKE_CASES = [{"n": 4100}, {"n": 1000}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def get_inputs(n: int = 98432) -> list[torch.Tensor]:
    return [torch.rand(n), torch.rand(n)]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return 1.0 * n


def bytes_moved(n: int) -> float:
    return 12.0 * n
