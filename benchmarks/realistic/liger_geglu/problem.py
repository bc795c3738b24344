"""GEGLU gate: c = gelu_tanh(a) * b, row by row (Liger-Kernel's forward kernel).

Category: elementwise. Source: linkedin/Liger-Kernel src/liger_kernel/ops/geglu.py (see SOURCE.md).
Memory-bound: two reads and one write per element. As in Liger, the tanh GELU runs in fp32 and is cast back to the
input dtype before the multiply.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "elementwise"
#: the kernel calls libdevice tanh, which Triton 3.9's interpreter does not implement.
CPU_VALIDATION = "compile_only"
CASES = [
    {"M": 8192, "N": 14336, "dtype": "bfloat16"},
    {"M": 16384, "N": 11008, "dtype": "bfloat16"},
    {"M": 4096, "N": 8192, "dtype": "float32"},
    {"M": 32768, "N": 3072, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "bfloat16"}]


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.gelu(a.float(), approximate="tanh").to(b.dtype) * b


def get_inputs(M: int = 1024, N: int = 4096, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, N, dtype=dt), torch.randn(M, N, dtype=dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 10.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 3.0 * M * N * getattr(torch, dtype).itemsize
