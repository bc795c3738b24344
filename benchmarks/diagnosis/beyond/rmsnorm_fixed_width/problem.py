"""RMSNorm over the last dimension of fp16 activations with a learned fp16 gain (hidden sizes 1280-3072).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 32768, "N": 3072}, {"M": 65536, "N": 1280}]
SMOKE_CASES = [{"M": 5, "N": 96}, {"M": 3, "N": 40}]
TOLERANCES = {"float16": {"atol": 1e-2, "rtol": 1e-2}}
EPS = 1e-6


class Model(nn.Module):
    def __init__(self, N: int = 96):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(N).half())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
        return (y * self.weight.float()).half()


def get_inputs(M: int = 8, N: int = 96) -> list[torch.Tensor]:
    return [torch.randn(M, N).half()]


def get_init_inputs(M: int = 8, N: int = 96) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N + 2.0 * N
