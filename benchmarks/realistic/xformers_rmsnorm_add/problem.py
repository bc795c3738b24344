"""Residual add + RMSNorm, fused and in place (xFormers): x += y, then out = x * rsqrt(mean(x^2) + eps) * w.

Category: norm. Source: facebookresearch/xformers xformers/ops/_triton/rmsnorm_kernels.py (see SOURCE.md).
The residual stream x is updated in place (INPLACE_OUTPUTS) and the normalized activations are returned.
Memory-bound: x and y read, x written, x re-read, out written (chunks of at most 8192 columns per pass).
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "norm"
INPLACE_OUTPUTS = [0]
#: the kernel calls libdevice rsqrt, which Triton 3.9's interpreter does not implement.
CPU_VALIDATION = "compile_only"
CASES = [
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "dtype": "bfloat16"},
    {"M": 4096, "N": 16384, "dtype": "float16"},
    {"M": 32768, "N": 2048, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 8, "N": 128, "dtype": "float32"}, {"M": 5, "N": 300, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "bfloat16", eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        s = x.float() + y.float()
        rstd = torch.rsqrt(s.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        x.copy_(s)  # the kernel stores the sum in x's dtype and normalizes the stored values
        return (x.float() * rstd * self.weight.float()).to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, N, dtype=dt), torch.randn(M, N, dtype=dt)]


def get_init_inputs(N: int = 1024, dtype: str = "bfloat16") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "bfloat16") -> float:
    return (4.0 * M * N + N) * getattr(torch, dtype).itemsize
