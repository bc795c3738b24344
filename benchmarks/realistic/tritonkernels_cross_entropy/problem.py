"""Per-token cross-entropy (no reduction) over a vocabulary, triton-lang/kernels' cross_entropy forward.

Category: loss. Source: triton-lang/kernels kernels/cross_entropy.py (see SOURCE.md).
One program per row holds the whole row (BLOCK = next power of two of V, set by `@heuristics`, which also sets
num_warps); it writes the full -log softmax table (kept for backward) and the loss of the target token.
Memory-bound: one read and one write of the logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "loss"
CASES = [
    {"M": 4096, "V": 32000, "dtype": "float32"},
    {"M": 8192, "V": 50257, "dtype": "float16"},
    {"M": 2048, "V": 128256, "dtype": "bfloat16"},
    {"M": 16384, "V": 32000, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 5, "V": 300, "dtype": "float32"}, {"M": 3, "V": 1000, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.float(), targets, reduction="none").to(logits.dtype)


def get_inputs(M: int = 64, V: int = 32000, dtype: str = "float32") -> list[torch.Tensor]:
    return [(torch.randn(M, V) * 2).to(getattr(torch, dtype)), torch.randint(0, V, (M,))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, V: int, **_) -> float:
    return 4.0 * M * V


def bytes_moved(M: int, V: int, dtype: str = "float32") -> float:
    return 2.0 * M * V * getattr(torch, dtype).itemsize + 8.0 * M


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
