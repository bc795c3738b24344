"""Sparsemax over the last dim (Martins & Astudillo 2016), Liger-Kernel's forward.

Category: softmax. Source: linkedin/Liger-Kernel src/liger_kernel/ops/sparsemax.py (see SOURCE.md).
Liger sorts each row in torch (descending, fp32), then one program per row computes the cumulative sums, the
support size and the threshold tau over the whole row, and writes max(x - tau, 0) in the input dtype.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "softmax"
#: Liger's launcher sorts every row with torch.sort before the kernel (as published); the reference sorts too.
ALLOWED_TORCH_OPS = ["sort"]
CASES = [
    {"M": 8192, "N": 4096, "dtype": "float32"},
    {"M": 32768, "N": 1024, "dtype": "bfloat16"},
    {"M": 4096, "N": 8192, "dtype": "float16"},
    {"M": 2048, "N": 32000, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 5, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = x.float()
        zs = torch.sort(z, dim=-1, descending=True).values
        k = torch.arange(1, z.shape[-1] + 1, dtype=torch.float32, device=z.device)
        cssv = zs.cumsum(-1)
        support = zs * k > cssv - 1
        k_max = support.sum(-1, keepdim=True).clamp_min(1)
        tau = (cssv.gather(-1, k_max - 1) - 1) / k_max.float()
        return torch.clamp(z - tau, min=0).to(x.dtype)


def get_inputs(M: int = 64, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [(torch.randn(M, N) * 2).to(getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return M * N * (2.0 * getattr(torch, dtype).itemsize + 4.0)


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
