"""Block-wise fp8 (e4m3) activation quantization, DeepSeek-V3's act_quant: one fp32 scale per 128 values.

Category: quantization. Source: deepseek-ai/DeepSeek-V3 inference/kernel.py (see SOURCE.md).
s = max(amax(block), 1e-4) / 448, y = fp8(x / s). Memory-bound: a 2-byte read, a 1-byte write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "quantization"
#: Triton 3.9's interpreter rounds fp32 -> float8e4nv without the exponent carry: a value that rounds up to a
#: power of two loses it (124.3 -> 64 where torch and the GPU give 128). Validated on the GPU.
CPU_VALIDATION = "compile_only"
#: one e4m3 step: 3 mantissa bits space values 2^-3 apart relative to their magnitude (128 -> 144), and x / s can
#: land on either side of a rounding boundary depending on how the scale was computed (H200: 4 of 58.7M elements).
TOLERANCES = {"float8_e4m3fn": {"atol": 0.1, "rtol": 0.126}}
CASES = [
    {"M": 16384, "K": 7168, "dtype": "bfloat16"},
    {"M": 4096, "K": 18432, "dtype": "bfloat16"},
    {"M": 65536, "K": 2048, "dtype": "bfloat16"},
    {"M": 8192, "K": 7168, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 4, "K": 256, "dtype": "float32"}, {"M": 3, "K": 384, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor):
        blocks = x.float().view(*x.shape[:-1], x.shape[-1] // 128, 128)
        s = blocks.abs().amax(dim=-1).clamp_min(1e-4) / 448.0
        y = (blocks / s[..., None]).view(x.shape).to(torch.float8_e4m3fn)
        return y, s


def get_inputs(M: int = 1024, K: int = 7168, dtype: str = "bfloat16") -> list[torch.Tensor]:
    return [torch.randn(M, K, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, K: int, **_) -> float:
    return 3.0 * M * K


def bytes_moved(M: int, K: int, dtype: str = "bfloat16") -> float:
    return M * K * (getattr(torch, dtype).itemsize + 1.0) + 4.0 * M * K / 128


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
