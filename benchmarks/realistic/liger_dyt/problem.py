"""Dynamic Tanh (DyT, the normalization-free LayerNorm replacement): y = gamma * tanh(alpha * x) + beta.

Category: norm. Source: linkedin/Liger-Kernel src/liger_kernel/ops/dyt.py (see SOURCE.md).
18-config autotune over the column block, a (column blocks, rows) grid from a `lambda meta`; fp32 math, the
input dtype stored. Memory-bound: one read, one write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "norm"
#: libdevice tanh, which Triton 3.9's interpreter cannot run.
CPU_VALIDATION = "compile_only"
CASES = [
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 8192, "N": 8192, "dtype": "bfloat16"},
    # the launch puts M on grid axis 1 (at most 65535 programs): M=65536 is a CUDA "invalid argument" as written
    {"M": 49152, "N": 1024, "dtype": "float32"},
    {"M": 32768, "N": 2048, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 1536, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, N: int, dtype: str = "float32"):
        super().__init__()
        dt = getattr(torch, dtype)
        self.alpha = nn.Parameter(torch.full((1,), 0.5, dtype=dt))
        self.gamma = nn.Parameter(torch.empty(N).uniform_(0.5, 1.5).to(dt))
        self.beta = nn.Parameter(torch.empty(N).uniform_(-0.5, 0.5).to(dt))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.tanh(self.alpha.float() * x.float()) * self.gamma.float() + self.beta.float()
        return y.to(x.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(N: int = 1024, dtype: str = "float32", **_) -> list:
    return [N, dtype]


def flops(M: int, N: int, **_) -> float:
    return 4.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return (2.0 * M * N + 2 * N) * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
