"""Column sums of an fp16 matrix accumulated in fp32 (x.sum(0, dtype=float32), a bias-gradient reduction).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound reduction over rows: M*N halves read, N floats written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 512}, {"M": 131072, "N": 128}]
SMOKE_CASES = [{"M": 50, "N": 40}, {"M": 9, "N": 128}]
TOLERANCES = {"float32": {"atol": 2e-3, "rtol": 1e-4}}  # fp32 sums of up to 128K terms in another order


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(0, dtype=torch.float32)


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return float(M * N)


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N + 4.0 * N
