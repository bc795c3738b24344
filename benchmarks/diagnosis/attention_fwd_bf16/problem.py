"""Scaled dot-product attention forward (no mask) for q, k, v of shape [B, H, S, D] in bf16.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound at these sizes: 4*B*H*S*S*D flops. The CPU smoke cases use fp16 (the Triton interpreter's
bf16 dot is not reliable).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"B": 4, "H": 16, "S": 2048, "D": 64, "dtype": "bfloat16"},
         {"B": 8, "H": 8, "S": 1024, "D": 128, "dtype": "bfloat16"}]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 40, "D": 16, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return nn.functional.scaled_dot_product_attention(q, k, v)


def get_inputs(B: int = 1, H: int = 2, S: int = 64, D: int = 32, dtype: str = "bfloat16") -> list[torch.Tensor]:
    return [torch.randn(B, H, S, D, dtype=getattr(torch, dtype)) for _ in range(3)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int, D: int, **_) -> float:
    return 4.0 * B * H * S * S * D


def bytes_moved(B: int, H: int, S: int, D: int, **_) -> float:
    return 4.0 * B * H * S * D * 2
