"""Decode-step attention (one new query token per sequence and head against a KV cache), kernl's vec-mat kernel.

Category: attention. Source: ELS-RD/kernl src/kernl/implementations/attention_vec_mat.py (see SOURCE.md).
q [B, H, 1, D], k, v [B, H, S, D] in fp16. Two launches of the autotuned `vec_mat` kernel: s = q k^T into an
fp32 buffer, then softmax(s * scale) v, each program reading a whole score row (S rounded up to a power of two).
Memory-bound: K and V are read once each.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "attention"
CASES = [
    {"B": 32, "H": 32, "S": 4096, "D": 128},
    {"B": 64, "H": 32, "S": 2048, "D": 128},
    {"B": 16, "H": 16, "S": 1024, "D": 64},
    {"B": 128, "H": 8, "S": 512, "D": 128},
]
SMOKE_CASES = [{"B": 2, "H": 2, "S": 64, "D": 32}, {"B": 1, "H": 3, "S": 128, "D": 16}]


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        s = (q.float() @ k.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
        return (torch.softmax(s, dim=-1) @ v.float()).to(q.dtype)


def get_inputs(B: int = 2, H: int = 8, S: int = 512, D: int = 64) -> list[torch.Tensor]:
    return [torch.randn(B, H, 1, D, dtype=torch.float16), torch.randn(B, H, S, D, dtype=torch.float16),
            torch.randn(B, H, S, D, dtype=torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int, D: int) -> float:
    return 4.0 * B * H * S * D


def bytes_moved(B: int, H: int, S: int, D: int) -> float:
    return 2.0 * (2 * B * H * S * D + 2 * B * H * D) + 8.0 * B * H * S


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
