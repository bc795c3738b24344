"""Mean cross-entropy over a batch of logits and int64 targets (attorch's kernel: partial sums, then ``sum()``).

Category: softmax / cross-entropy. Source: BobMcDear/attorch attorch/cross_entropy_loss_kernels.py (SOURCE.md).
Memory-bound: the logits are read once; each program writes one partial loss that the launcher sums with torch
(declared in ALLOWED_TORCH_OPS).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "softmax"
ALLOWED_TORCH_OPS = ["sum"]
CASES = [
    {"B": 16384, "V": 32000, "dtype": "float32"},
    {"B": 8192, "V": 50257, "dtype": "float32"},
    {"B": 65536, "V": 4096, "dtype": "float32"},
    {"B": 16384, "V": 32000, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"B": 7, "V": 300, "dtype": "float32"}, {"B": 9, "V": 40, "dtype": "float32"}]
TOLERANCES = {"bfloat16": {"atol": 2e-2, "rtol": 2e-2}}


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.float(), target).to(logits.dtype)


def get_inputs(B: int = 1024, V: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(B, V, dtype=getattr(torch, dtype)), torch.randint(0, V, (B,))]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, V: int, **_) -> float:
    return 4.0 * B * V


def bytes_moved(B: int, V: int, dtype: str = "float32") -> float:
    return B * V * getattr(torch, dtype).itemsize + 8.0 * B
