"""Per-token symmetric int8 quantization (SGLang): q = round(x * 127 / absmax(row)), scale = absmax / 127.

Category: quantization. Source: sgl-project/sglang python/sglang/srt/layers/quantization/int8_kernel.py
(see SOURCE.md). Returns the int8 tensor and the fp32 per-row scales. Memory-bound: one read, a 1-byte write.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "quantization"
#: the kernel rounds with libdevice round, which Triton 3.9's interpreter does not implement.
CPU_VALIDATION = "compile_only"
#: values at a .5 boundary may land one step apart: libdevice round goes half away from zero, torch.round half
#: to even, and the GPU's fp32 division can differ from torch's in the last bit.
INT_ATOL = 1
CASES = [
    {"M": 65536, "N": 4096, "dtype": "bfloat16"},
    {"M": 16384, "N": 8192, "dtype": "float16"},
    {"M": 32768, "N": 7168, "dtype": "bfloat16"},
    {"M": 8192, "N": 16384, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 7, "N": 300, "dtype": "float32"}, {"M": 4, "N": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor):
        xf = x.float()
        absmax = xf.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
        q = torch.round(xf * (127 / absmax)).to(torch.int8)
        return q, absmax / 127


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 3.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return M * N * (getattr(torch, dtype).itemsize + 1.0) + 4.0 * M
