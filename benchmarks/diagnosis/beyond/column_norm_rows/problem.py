"""Feature standardisation y = (x - mean) / sqrt(var + eps) with precomputed per-column statistics, fp16 data.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 2048}, {"M": 32768, "N": 3072}]
SMOKE_CASES = [{"M": 21, "N": 100}, {"M": 8, "N": 64}]
TOLERANCES = {"float16": {"atol": 1e-2, "rtol": 1e-2}}
EPS = 1e-5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
        return ((x.float() - mean[None, :]) / torch.sqrt(var[None, :] + EPS)).half()


def get_inputs(M: int = 8, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N).half(), 0.1 * torch.randn(N), torch.rand(N) + 0.5]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N + 8.0 * N
