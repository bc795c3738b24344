"""Per-token-group int8 quantization in groups of 128 (SGLang's Triton kernel): q = trunc(clamp(x / s)).

Category: quantization. Source: sgl-project/sglang python/sglang/srt/layers/quantization/int8_kernel.py
(see SOURCE.md). s = max(absmax(group), eps) / 127 per group, fp32; the quotient is clamped to [-128, 127] and
converted to int8 by truncation toward zero, as the kernel does. Memory-bound: one read, a 1-byte write.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "quantization"
#: fp32 division lowers to the approximate div.full.f32 on sm_90: a quotient just below an integer can come out
#: as that integer on the GPU, so truncation may differ by one step.
INT_ATOL = 1
CASES = [
    {"M": 65536, "N": 4096, "dtype": "bfloat16"},
    {"M": 16384, "N": 7168, "dtype": "bfloat16"},
    {"M": 32768, "N": 8192, "dtype": "float16"},
    {"M": 8192, "N": 16384, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 3, "N": 384, "dtype": "float32"}, {"M": 2, "N": 256, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, group_size: int = 128):
        super().__init__()
        self.group_size = group_size

    def forward(self, x: torch.Tensor):
        M, N = x.shape
        g = x.float().view(M, N // self.group_size, self.group_size)
        s = g.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10) / 127
        q = (g / s).clamp(-128, 127).to(torch.int8)  # float -> int8 truncates toward zero
        return q.view(M, N), s[..., 0]


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return [128]


def flops(M: int, N: int, **_) -> float:
    return 3.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return M * N * (getattr(torch, dtype).itemsize + 1.0) + 4.0 * M * N / 128
