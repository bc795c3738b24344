"""RMSNorm with a learned scale over an fp16 hidden size of 2K-4K (statistics in fp32).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound norm: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 65536, "N": 2048}, {"M": 32768, "N": 4096}]
SMOKE_CASES = [{"M": 5, "N": 256}]


class Model(nn.Module):
    def __init__(self, N: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter((torch.rand(N) + 0.5).to(torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def get_inputs(M: int = 64, N: int = 256) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs(N: int = 256, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (2.0 * M * N + N) * 2
