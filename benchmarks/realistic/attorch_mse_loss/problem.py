"""Mean squared error over two large tensors, attorch's p-loss kernel with p=2 and mean reduction.

Category: reduction. Source: BobMcDear/attorch attorch/p_loss_kernels.py + p_loss_layers.py (see SOURCE.md).
Each program reduces BLOCK_SIZE elements (already divided by the size) to one partial; the launcher reads the
autotuner's best BLOCK_SIZE and finishes with `.sum()` over the partials. Memory-bound: two reads per element.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "reduction"
ALLOWED_TORCH_OPS = ["sum"]
CASES = [
    {"M": 8192, "N": 8192, "dtype": "float32"},
    {"M": 16384, "N": 4096, "dtype": "bfloat16"},
    {"M": 4096, "N": 4096, "dtype": "float16"},
    {"M": 32768, "N": 8192, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 4, "N": 300, "dtype": "float32"}, {"M": 3, "N": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, input: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.mse_loss(input.float(), target.float()).to(input.dtype)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(M, N, dtype=dt), torch.randn(M, N, dtype=dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 3.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
