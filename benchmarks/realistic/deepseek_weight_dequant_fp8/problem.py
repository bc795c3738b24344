"""fp8 (e4m3) weight dequantization with one fp32 scale per 128x128 block, DeepSeek-V3's weight_dequant.

Category: quantization. Source: deepseek-ai/DeepSeek-V3 inference/kernel.py (see SOURCE.md).
y = fp32(w) * s[i // 128, j // 128], output in torch's default dtype (fp32 here). Memory-bound: a 1-byte read,
a 4-byte write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "quantization"
CASES = [
    {"M": 7168, "N": 18432},
    {"M": 18432, "N": 7168},
    {"M": 4096, "N": 7168},
    {"M": 24576, "N": 1536},
]
SMOKE_CASES = [{"M": 256, "N": 384}, {"M": 200, "N": 136}]


class Model(nn.Module):
    def forward(self, w: torch.Tensor, scale: torch.Tensor):
        s = scale.repeat_interleave(128, 0)[: w.shape[0]].repeat_interleave(128, 1)[:, : w.shape[1]]
        return w.float() * s


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    w = (torch.randn(M, N) * 100).clamp(-448, 448).to(torch.float8_e4m3fn)
    scale = torch.rand((M + 127) // 128, (N + 127) // 128) * 1e-3 + 1e-4
    return [w, scale]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 1.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 5.0 * M * N


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
