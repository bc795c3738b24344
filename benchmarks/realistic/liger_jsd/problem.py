"""Generalized Jensen-Shannon divergence (beta = 0.5) between student and teacher log-probs, Liger-Kernel's JSD.

Category: loss. Source: linkedin/Liger-Kernel src/liger_kernel/ops/jsd.py (see SOURCE.md).
x = log Q (student), y = log P (teacher), rows of BT tokens over a vocabulary V; M = (P + Q) / 2;
loss = sum(beta P y + (1 - beta) Q x - M log M) / BT. The kernel writes a full fp32 [BT, V] loss map and the
gradient (for backward); the launcher finishes with `torch.sum`. Memory-bound: two reads, two writes per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "loss"
ALLOWED_TORCH_OPS = ["sum"]
CASES = [
    {"BT": 4096, "V": 128256, "dtype": "bfloat16"},
    {"BT": 8192, "V": 32000, "dtype": "bfloat16"},
    {"BT": 16384, "V": 32000, "dtype": "float32"},
    {"BT": 2048, "V": 151936, "dtype": "float16"},
]
SMOKE_CASES = [{"BT": 4, "V": 300, "dtype": "float32"}, {"BT": 3, "V": 128, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        beta = 0.5
        xf, yf = x.float(), y.float()
        q, p = xf.exp(), yf.exp()
        m = beta * p + (1 - beta) * q
        loss = beta * p * yf + (1 - beta) * q * xf - m * m.log()
        return (loss.sum() / x.shape[0]).to(x.dtype)


def get_inputs(BT: int = 1024, V: int = 32000, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    x = torch.log_softmax(torch.randn(BT, V), dim=-1).to(dt)
    y = torch.log_softmax(torch.randn(BT, V), dim=-1).to(dt)
    return [x, y]


def get_init_inputs(**_) -> list:
    return []


def flops(BT: int, V: int, **_) -> float:
    return 15.0 * BT * V


def bytes_moved(BT: int, V: int, dtype: str = "float32") -> float:
    return BT * V * (3.0 * getattr(torch, dtype).itemsize + 4.0)


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
