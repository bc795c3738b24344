"""RMSNorm with a learned scale over a narrow bf16 hidden size (per-head q/k norm).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound row reduction: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 262144, "N": 128}, {"M": 524288, "N": 64}]
SMOKE_CASES = [{"M": 19, "N": 128}]


class Model(nn.Module):
    def __init__(self, N: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.rand(N) + 0.5).to(torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def get_inputs(M: int = 64, N: int = 128) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs(N: int = 128, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + N) * 2
