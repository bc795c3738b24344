"""gelu(x + bias) + residual for fp16 activations (an MLP epilogue; GELU in its tanh form).

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound elementwise: two reads and one write per element at best.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192}, {"M": 16384, "N": 2048}]
SMOKE_CASES = [{"M": 6, "N": 100}]


class Model(nn.Module):
    def __init__(self, N: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(N, dtype=torch.float16))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = nn.functional.gelu(x.float() + self.bias.float(), approximate="tanh")
        return (h + residual.float()).to(x.dtype)


def get_inputs(M: int = 64, N: int = 64) -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=torch.float16), torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs(N: int = 64, **_) -> list:
    return [N]


def flops(M: int, N: int) -> float:
    return 12.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return (3.0 * M * N + N) * 2
