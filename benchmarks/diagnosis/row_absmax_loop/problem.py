"""Per-row absolute maximum of bf16 activations, the scale of a per-token int8 quantizer (absmax / 127).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read per element, one value written per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192}, {"M": 2048, "N": 28672}]
SMOKE_CASES = [{"M": 6, "N": 1500}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.float().abs().amax(dim=-1) / 127.0


def get_inputs(M: int = 64, N: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N + 4.0 * M
