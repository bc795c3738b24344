"""Log-sum-exp over the vocabulary dim of logits (fla's logsumexp, used by its fused cross-entropy).

Category: reduction. Source: fla-org/flash-linear-attention fla/ops/utils/logsumexp.py (see SOURCE.md).
One program per (row, 64K-column block): max, then log-sum-exp of the block in fp32 (a warps-only autotune and
a `@triton.heuristics` for the optional scale); rows wider than 65536 leave several partials that fla combines
with torch's `logsumexp` over that small dim. Output fp32. Memory-bound: one read.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "reduction"
CASES = [
    {"N": 8192, "D": 32000, "dtype": "float32"},
    {"N": 4096, "D": 128256, "dtype": "bfloat16"},
    {"N": 16384, "D": 50257, "dtype": "float16"},
    {"N": 2048, "D": 151936, "dtype": "float32"},
]
SMOKE_CASES = [{"N": 5, "D": 300, "dtype": "float32"}, {"N": 3, "D": 1000, "dtype": "float16"},
               {"N": 2, "D": 70000, "dtype": "float32"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x.float(), dim=-1)


def get_inputs(N: int = 64, D: int = 32000, dtype: str = "float32") -> list[torch.Tensor]:
    return [(torch.randn(N, D) * 3).to(getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(N: int, D: int, **_) -> float:
    return 4.0 * N * D


def bytes_moved(N: int, D: int, dtype: str = "float32") -> float:
    return 1.0 * N * D * getattr(torch, dtype).itemsize + 4.0 * N


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
