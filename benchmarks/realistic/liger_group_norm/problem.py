"""GroupNorm with affine weight and bias over [N, C, H*W] activations, Liger-Kernel's kernel.

Category: norm. Source: linkedin/Liger-Kernel src/liger_kernel/ops/group_norm.py (see SOURCE.md).
One program per (sample, group) loops twice over the group's C/G x HW elements (sum and sum of squares, then
normalize with per-channel weight and bias); mean and rstd are stored for backward. Memory-bound.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "norm"
#: libdevice rsqrt and `eps.to(tl.float32)` on a float argument: Triton 3.9's interpreter runs neither.
CPU_VALIDATION = "compile_only"
CASES = [
    {"N": 16, "C": 512, "G": 32, "HW": 4096, "dtype": "float32"},
    {"N": 8, "C": 1280, "G": 32, "HW": 1024, "dtype": "float16"},
    {"N": 32, "C": 256, "G": 32, "HW": 16384, "dtype": "bfloat16"},
    {"N": 4, "C": 640, "G": 32, "HW": 4096, "dtype": "float32"},
]
SMOKE_CASES = [{"N": 2, "C": 8, "G": 4, "HW": 30, "dtype": "float32"}, {"N": 3, "C": 6, "G": 2, "HW": 16, "dtype": "float32"}]


class Model(nn.Module):
    def __init__(self, C: int, G: int, dtype: str = "float32"):
        super().__init__()
        dt = getattr(torch, dtype)
        self.C, self.G = C, G
        self.weight = nn.Parameter(torch.empty(C).uniform_(0.5, 1.5).to(dt))
        self.bias = nn.Parameter(torch.empty(C).uniform_(-0.5, 0.5).to(dt))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.group_norm(x.float(), self.G, self.weight.float(), self.bias.float(), 1e-6)
        return y.to(x.dtype)


def get_inputs(N: int = 2, C: int = 64, G: int = 8, HW: int = 256, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(N, C, HW, dtype=getattr(torch, dtype))]


def get_init_inputs(C: int = 64, G: int = 8, dtype: str = "float32", **_) -> list:
    return [C, G, dtype]


def flops(N: int, C: int, HW: int, **_) -> float:
    return 8.0 * N * C * HW


def bytes_moved(N: int, C: int, HW: int, dtype: str = "float32", **_) -> float:
    return 2.0 * N * C * HW * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
