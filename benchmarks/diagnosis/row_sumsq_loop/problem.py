"""Per-row Euclidean norms of long fp32 rows (e.g. gradient-norm clipping per parameter row).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read per element, one value written per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 16384}, {"M": 1024, "N": 65536}]
SMOKE_CASES = [{"M": 5, "N": 3000}]
# sums of tens of thousands of squares: the accumulation order differs between implementations
TOLERANCES = {"float32": (1e-4, 1e-4)}


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x, dim=-1)


def get_inputs(M: int = 64, N: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N + 4.0 * M
