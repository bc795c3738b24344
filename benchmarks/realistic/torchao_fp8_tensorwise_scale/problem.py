"""Tensorwise dynamic fp8 scale of a whole tensor: scale = 448 / max(amax(|x|), 1e-12) (torchao float8nocompile).

Category: reduction. Source: pytorch/ao torchao/prototype/float8nocompile/kernels/fp8_dynamic_tensorwise.py
(see SOURCE.md). A global max: each program reduces one block (autotuned block size) and folds it into one fp32
cell with `tl.atomic_max`; a one-program kernel turns the amax into the fp32 scale (computed in fp64). Memory-bound:
one read of the tensor.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "reduction"
CASES = [
    {"M": 8192, "N": 8192, "dtype": "bfloat16"},
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 4096, "N": 14336, "dtype": "float32"},
    {"M": 65536, "N": 1024, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 1000, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        amax = x.abs().amax().double().clamp(min=1e-12)
        return (torch.finfo(torch.float8_e4m3fn).max / amax).float()


def get_inputs(M: int = 64, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [(torch.randn(M, N) * 3).to(getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 1.0 * M * N * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
