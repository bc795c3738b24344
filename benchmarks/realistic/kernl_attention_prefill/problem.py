"""Causal prefill attention (fp16, [B, H, S, D]), kernl's fused online-softmax forward kernel.

Category: attention. Source: ELS-RD/kernl src/kernl/implementations/attention.py (see SOURCE.md).
One program per 128-query block and (batch, head) walks 128-key blocks with an online softmax, masking the
causal diagonal and the ragged edges (`M/N_LOAD_MASK_NEEDED`); the grid comes from a `lambda args`. Compute-bound
at long sequences.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "attention"
CASES = [
    {"B": 4, "H": 32, "S": 2048, "D": 128},
    {"B": 1, "H": 32, "S": 8192, "D": 128},
    {"B": 8, "H": 16, "S": 1024, "D": 64},
    {"B": 2, "H": 12, "S": 4000, "D": 64},
]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 100, "D": 32}, {"B": 2, "H": 1, "S": 130, "D": 64}]


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True).to(q.dtype)


def get_inputs(B: int = 1, H: int = 4, S: int = 256, D: int = 64) -> list[torch.Tensor]:
    return [torch.randn(B, H, S, D, dtype=torch.float16) for _ in range(3)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int, D: int) -> float:
    return 2.0 * B * H * S * S * D  # causal: half of 4 * B * H * S^2 * D


def bytes_moved(B: int, H: int, S: int, D: int) -> float:
    return 2.0 * 4 * B * H * S * D


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
