"""SwiGLU gate of a gated MLP: y = silu(gate) * up, two inputs of the same shape.

Category: fusions without convolution. KernelBench origin: none (the LLaMA / Mistral MLP activation; eager runs
silu and the product as two kernels). Memory-bound: two reads and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "fusion"
CASES = [
    {"M": 8192, "N": 8192, "dtype": "float32"},
    {"M": 32768, "N": 4096, "dtype": "float32"},
    {"M": 4096, "N": 14336, "dtype": "float32"},
    {"M": 10007, "N": 7777, "dtype": "float32"},
    {"M": 16384, "N": 11008, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 8, "N": 100, "dtype": "float32"}, {"M": 5, "N": 77, "dtype": "bfloat16"}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003, "dtype": "float32"}, {"M": 20011, "N": 1531, "dtype": "bfloat16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.silu(gate) * up


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, N, dtype=dt), torch.randn(M, N, dtype=dt)]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 3.0 * M * N * getattr(torch, dtype).itemsize
