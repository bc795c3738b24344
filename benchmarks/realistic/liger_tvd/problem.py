"""Total variation distance between two probability tables, batch-mean reduced, Liger-Kernel's TVD loss.

Category: loss. Source: linkedin/Liger-Kernel src/liger_kernel/ops/tvd.py (see SOURCE.md).
loss = sum(0.5 * |p - q|) / BT in fp32; the kernel also writes the gradient sign table (for backward) and one
partial per row; the launcher finishes with `.sum()`. Memory-bound: two reads, one write per element.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "loss"
CASES = [
    {"BT": 4096, "V": 128256, "dtype": "float32"},
    {"BT": 8192, "V": 32000, "dtype": "bfloat16"},
    {"BT": 16384, "V": 32000, "dtype": "float32"},
    {"BT": 2048, "V": 151936, "dtype": "float16"},
]
SMOKE_CASES = [{"BT": 4, "V": 300, "dtype": "float32"}, {"BT": 3, "V": 128, "dtype": "float32"}]
#: the loss comes back in fp32 whatever the input dtype (Liger's output tensor is fp32)
OUTPUT_DTYPES = {0: "float32"}


class Model(nn.Module):
    def forward(self, p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        return ((0.5 * (p.float() - q.float()).abs()).sum() / p.shape[0]).to(p.dtype)


def get_inputs(BT: int = 1024, V: int = 32000, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.softmax(torch.randn(BT, V), dim=-1).to(dt), torch.softmax(torch.randn(BT, V), dim=-1).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(BT: int, V: int, **_) -> float:
    return 5.0 * BT * V


def bytes_moved(BT: int, V: int, dtype: str = "float32") -> float:
    return 3.0 * BT * V * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
