"""LayerNorm with weight and bias, kernl's single-pass (Welford-style) kernel, for fp16 transformer inference.

Category: norm. Source: ELS-RD/kernl src/kernl/implementations/layer_norm.py (see SOURCE.md).
One program per row streams the row in blocks of at most 4096 columns twice: running mean/variance, then
normalize, scale and shift; mean and rstd are stored (autograd function). Memory-bound.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "norm"
CASES = [
    {"M": 16384, "N": 768, "dtype": "float16"},
    {"M": 8192, "N": 4096, "dtype": "float16"},
    {"M": 4096, "N": 12288, "dtype": "float16"},
    {"M": 32768, "N": 1024, "dtype": "float32"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 5000, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float16"):
        super().__init__()
        dt = getattr(torch, dtype)
        self.weight = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(dt))
        self.bias = nn.Parameter(torch.empty(N).uniform_(-0.5, 0.5).to(dt))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.layer_norm(x.float(), (x.shape[-1],), self.weight.float(), self.bias.float(), 1e-5)
        return y.to(x.dtype)


def get_inputs(M: int = 64, N: int = 1024, dtype: str = "float16") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float16", **_) -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 8.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float16") -> float:
    return (2.0 * M * N + 2 * N) * getattr(torch, dtype).itemsize + 8.0 * M


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
