"""Scaled dot-product attention forward (no mask) for fp16 q, k, v of shape [B, H, S, D].

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Compute-bound at these sizes: 4*B*H*S*S*D flops; q, k, v read and o written once at best.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"B": 4, "H": 16, "S": 2048, "D": 128}, {"B": 2, "H": 32, "S": 4096, "D": 128}]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 40, "D": 32}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return nn.functional.scaled_dot_product_attention(q, k, v)


def get_inputs(B: int = 1, H: int = 2, S: int = 64, D: int = 32) -> list[torch.Tensor]:
    return [torch.randn(B, H, S, D, dtype=torch.float16) for _ in range(3)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int, D: int) -> float:
    return 4.0 * B * H * S * S * D


def bytes_moved(B: int, H: int, S: int, D: int) -> float:
    return 4.0 * B * H * S * D * 2
