"""gelu(x @ W^T + b) (tanh GELU): a bf16 linear layer with its activation, as in a transformer MLP.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound: 2*M*N*K flops. The CPU smoke case uses fp16 (the Triton interpreter's bf16 dot is not reliable).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 8192, "N": 8192, "K": 2048, "dtype": "bfloat16"}, {"M": 4096, "N": 11008, "K": 4096, "dtype": "bfloat16"}]
SMOKE_CASES = [{"M": 24, "N": 72, "K": 64, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, K: int, N: int, dtype: str = "bfloat16"):
        super().__init__()
        self.fc = nn.Linear(K, N).to(getattr(torch, dtype))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.fc(x), approximate="tanh")


def get_inputs(M: int = 64, K: int = 64, dtype: str = "bfloat16", **_) -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=getattr(torch, dtype))]


def get_init_inputs(K: int = 64, N: int = 64, dtype: str = "bfloat16", **_) -> list:
    return [K, N, dtype]


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, **_) -> float:
    return (M * K + N * K + M * N) * 2.0
