"""KL divergence with batchmean reduction, predictions in log space (Liger-Kernel's kernel + ``sum() / BT``).

Category: softmax / loss. Source: linkedin/Liger-Kernel src/liger_kernel/ops/kl_div.py (see SOURCE.md).
loss = sum(y_true * (log(max(y_true, eps)) - y_pred)) / B. One program per row loops over the vocabulary in
blocks of 16384 and stores a row sum; the launcher reduces the rows with torch (ALLOWED_TORCH_OPS).
Memory-bound: both inputs are read once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "softmax"
ALLOWED_TORCH_OPS = ["sum"]
CASES = [
    {"B": 8192, "V": 32000, "dtype": "float32"},
    {"B": 4096, "V": 128256, "dtype": "bfloat16"},
    {"B": 16384, "V": 8192, "dtype": "float32"},
    {"B": 2048, "V": 151936, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"B": 5, "V": 300, "dtype": "float32"}, {"B": 3, "V": 20000, "dtype": "float32"}]
#: the bf16 cases take log of bf16 probabilities in the kernel; the fp32 loss is compared at 1e-3 relative.
TOLERANCES = {"float32": {"atol": 1e-4, "rtol": 1e-3}}


class Model(nn.Module):
    def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        return F.kl_div(y_pred.float(), y_true.float(), reduction="batchmean")


def get_inputs(B: int = 64, V: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.log_softmax(torch.randn(B, V), dim=-1).to(dt), torch.softmax(torch.randn(B, V), dim=-1).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, V: int, **_) -> float:
    return 4.0 * B * V


def bytes_moved(B: int, V: int, dtype: str = "float32") -> float:
    return 2.0 * B * V * getattr(torch, dtype).itemsize + 4.0 * B
