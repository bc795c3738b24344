"""L2 normalization over the head dim of query/key tensors (linear-attention models), fla's l2norm.

Category: norm. Source: fla-org/flash-linear-attention fla/modules/l2norm.py (see SOURCE.md).
y = x / sqrt(sum(x^2) + eps) per row of D, fp32 math; the per-row 1/norm is stored for backward. For D <= 512
a 25-config autotune picks rows per program (BT) and warps (grid from a named function); above, one row per
program with a warps-only autotune. Memory-bound: one read, one write.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "norm"
CASES = [
    {"B": 8, "T": 4096, "H": 32, "D": 128, "dtype": "bfloat16"},
    {"B": 4, "T": 8192, "H": 16, "D": 64, "dtype": "bfloat16"},
    {"B": 16, "T": 2048, "H": 8, "D": 256, "dtype": "float32"},
    {"B": 8, "T": 4096, "H": 2, "D": 1024, "dtype": "float16"},
]
SMOKE_CASES = [{"B": 2, "T": 9, "H": 2, "D": 64, "dtype": "float32"},
               {"B": 1, "T": 5, "H": 2, "D": 1000, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        return (xf / torch.sqrt(xf.pow(2).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)


def get_inputs(B: int = 2, T: int = 128, H: int = 4, D: int = 128, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(B, T, H, D, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, T: int, H: int, D: int, **_) -> float:
    return 3.0 * B * T * H * D


def bytes_moved(B: int, T: int, H: int, D: int, dtype: str = "float32") -> float:
    return 2.0 * B * T * H * D * getattr(torch, dtype).itemsize + 4.0 * B * T * H


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
