"""Residual add + RMSNorm (the pre-norm transformer block's fused add-norm): h = x + residual,
out = h / sqrt(mean(h^2) + eps) * weight (in fp32); returns (out, h).

Category: fusions without convolution. KernelBench origin: none (vLLM's ``fused_add_rms_norm``; eager runs the
add, the norm's reductions and scalings as several kernels). Memory-bound: two reads and two writes per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "fusion"
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

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x + residual
        hf = h.float()
        out = hf * torch.rsqrt(hf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight.float()
        return out.to(x.dtype), h


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, N, dtype=dt), torch.randn(M, N, dtype=dt)]


def get_init_inputs(N: int = 1024, dtype: str = "float32") -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 5.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (4.0 * M * N + N) * getattr(torch, dtype).itemsize
