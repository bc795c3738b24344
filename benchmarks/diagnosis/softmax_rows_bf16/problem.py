"""Softmax over the last dimension of a bf16 matrix (fp32 arithmetic, bf16 result).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 32768, "N": 4096}, {"M": 65536, "N": 2048}]
SMOKE_CASES = [{"M": 5, "N": 300}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.float(), dim=-1).to(x.dtype)


def get_inputs(M: int = 64, N: int = 256) -> list[torch.Tensor]:
    return [(torch.randn(M, N) * 3.0).to(torch.bfloat16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 2.0 * M * N * 2
