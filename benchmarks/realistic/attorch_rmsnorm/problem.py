"""RMSNorm with weight, eps = the dtype's machine epsilon (attorch's kernel and layer default).

Category: norm. Source: BobMcDear/attorch attorch/rms_norm_kernels.py (see SOURCE.md).
y = x * rsqrt(mean(x^2) + eps) * w in fp32, stored in the input dtype; attorch's layer defaults eps to
``torch.finfo(dtype).eps`` (7.8e-3 for bf16). Memory-bound: one read, one write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "norm"
CASES = [
    {"M": 65536, "N": 1024, "dtype": "float32"},
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "dtype": "float16"},
    {"M": 32768, "N": 3000, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 8, "N": 128, "dtype": "float32"}, {"M": 5, "N": 300, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float32"):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        eps = torch.finfo(x.dtype).eps
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
        return (y * self.weight.float()).to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float32") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (2.0 * M * N + N) * getattr(torch, dtype).itemsize
