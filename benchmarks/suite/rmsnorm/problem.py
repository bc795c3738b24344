"""RMSNorm over the last dimension (LLaMA style): y = x / sqrt(mean(x^2) + eps) * weight, computed in fp32.

Category: reductions, norms, softmax and log-softmax. KernelBench origin: level1/36_RMSNorm_ (there over the
channel dimension of a 4-D tensor; here over the hidden size of a token matrix, as in LLaMA).
Memory-bound: one read and one write per element, a sum of squares per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "reduction"
CASES = [
    {"M": 65536, "N": 1024, "dtype": "float32"},
    {"M": 16384, "N": 4096, "dtype": "float32"},
    {"M": 4096, "N": 16384, "dtype": "float32"},
    {"M": 32768, "N": 3000, "dtype": "float32"},
    {"M": 32768, "N": 4096, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 8, "N": 128, "dtype": "float32"}, {"M": 5, "N": 300, "dtype": "bfloat16"}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003, "dtype": "float32"}, {"M": 20011, "N": 1531, "dtype": "bfloat16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float32", eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(getattr(torch, dtype)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float32") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (2.0 * M * N + N) * getattr(torch, dtype).itemsize
