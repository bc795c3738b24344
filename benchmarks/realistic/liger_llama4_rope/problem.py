"""Llama-4 rotary embedding of q and k with complex frequencies on interleaved (real, imag) pairs, Liger's kernel.

Category: rotary. Source: linkedin/Liger-Kernel src/liger_kernel/ops/llama4_rope.py (see SOURCE.md).
q [B, S, Hq, D], k [B, S, Hkv, D], freqs_cis [S, D/2, 2] (cos, sin) fp32, the real view Liger's launcher also accepts instead of complex64. One program per (token, head) rotates with
fma in the input dtype. q and k are already contiguous, so Liger rotates them in place and returns them: the
reference does the same (INPLACE_OUTPUTS).
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "rotary"
INPLACE_OUTPUTS = [0, 1]
CASES = [
    {"B": 1, "S": 8192, "HQ": 40, "HKV": 8, "D": 128, "dtype": "bfloat16"},
    {"B": 4, "S": 4096, "HQ": 40, "HKV": 8, "D": 128, "dtype": "bfloat16"},
    {"B": 8, "S": 2048, "HQ": 32, "HKV": 8, "D": 128, "dtype": "float16"},
    {"B": 2, "S": 4096, "HQ": 16, "HKV": 4, "D": 64, "dtype": "float32"},
]
SMOKE_CASES = [{"B": 2, "S": 5, "HQ": 4, "HKV": 2, "D": 64, "dtype": "float32"},
               {"B": 1, "S": 3, "HQ": 3, "HKV": 1, "D": 128, "dtype": "float16"}]


def _rotate(x, freqs_cis):
    xf = x.float()
    xr, xi = xf[..., 0::2], xf[..., 1::2]
    fr, fi = freqs_cis[None, :, None, :, 0], freqs_cis[None, :, None, :, 1]
    return torch.stack((xr * fr - xi * fi, xr * fi + xi * fr), dim=-1).flatten(3).to(x.dtype)


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, freqs_cis: torch.Tensor):
        q.copy_(_rotate(q, freqs_cis))
        k.copy_(_rotate(k, freqs_cis))
        return q, k


def get_inputs(B: int = 1, S: int = 128, HQ: int = 8, HKV: int = 2, D: int = 128,
               dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    inv_freq = 1.0 / (500000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    angles = torch.outer(torch.arange(S, dtype=torch.float32), inv_freq)
    return [torch.randn(B, S, HQ, D, dtype=dt), torch.randn(B, S, HKV, D, dtype=dt), torch.stack((angles.cos(), angles.sin()), dim=-1)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, S: int, HQ: int, HKV: int, D: int, **_) -> float:
    return 3.0 * B * S * (HQ + HKV) * D


def bytes_moved(B: int, S: int, HQ: int, HKV: int, D: int, dtype: str = "bfloat16") -> float:
    return 2.0 * B * S * (HQ + HKV) * D * getattr(torch, dtype).itemsize + 4.0 * S * D


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
