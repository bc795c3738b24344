"""PolyNorm (PolyCom activation-normalization): y = w0 norm(x^3) + w1 norm(x^2) + w2 norm(x) + b, Liger's kernel.

Category: norm. Source: linkedin/Liger-Kernel src/liger_kernel/ops/poly_norm.py (see SOURCE.md).
norm(u) = u / sqrt(mean(u^2) + eps) per row; one program per row holds the whole row and computes the three
statistics in the input dtype (no fp32 upcast before the powers), caching three rstd per row. Memory-bound.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "norm"
#: libdevice rsqrt and `eps.to(tl.float32)` on a float argument: Triton 3.9's interpreter runs neither.
CPU_VALIDATION = "compile_only"
#: the kernel keeps its statistics in the input dtype (see above): bf16 outputs land up to two bf16 steps from the
#: fp32 reference (H200: 60 of 33.5M elements outside 1e-2, e.g. -2.094 vs -2.0625).
TOLERANCES = {"bfloat16": {"atol": 0.02, "rtol": 0.02}}
CASES = [
    {"M": 16384, "N": 4096, "dtype": "float32"},
    {"M": 8192, "N": 8192, "dtype": "float32"},
    {"M": 65536, "N": 1024, "dtype": "float32"},
    {"M": 16384, "N": 2048, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "float32"}]


def _norm(u, eps):
    return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + eps)


class Model(nn.Module):
    def __init__(self, dtype: str = "float32"):
        super().__init__()
        dt = getattr(torch, dtype)
        self.weight = nn.Parameter(torch.tensor([0.3, 0.5, 0.8]).to(dt))
        self.bias = nn.Parameter(torch.tensor([0.1]).to(dt))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf, w = x.float(), self.weight.float()
        y = w[0] * _norm(xf ** 3, 1e-6) + w[1] * _norm(xf ** 2, 1e-6) + w[2] * _norm(xf, 1e-6) + self.bias.float()
        return y.to(x.dtype)


def get_inputs(M: int = 64, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(dtype: str = "float32", **_) -> list:
    return [dtype]


def flops(M: int, N: int, **_) -> float:
    return 14.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize + 12.0 * M


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
