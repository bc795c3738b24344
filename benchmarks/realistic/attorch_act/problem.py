"""GELU (tanh approximation) over a whole activation tensor, attorch's activation kernel (dropout off).

Category: activation. Source: BobMcDear/attorch attorch/act_kernels.py + act_layers.py (see SOURCE.md).
attorch computes the activation in fp32 (its tanh is 2 * sigmoid(2x) - 1) and stores the input dtype.
Memory-bound: one read, one write per element.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "activation"
CASES = [
    {"M": 8192, "N": 14336, "dtype": "bfloat16"},
    {"M": 16384, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 8192, "dtype": "float32"},
    {"M": 32768, "N": 3072, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x.float(), approximate="tanh").to(x.dtype)


def get_inputs(M: int = 1024, N: int = 4096, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 12.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
