"""Scaled causal softmax over attention scores: softmax(masked_fill(scores * scale, j > i, -inf), dim=-1).

scores [B, H, S, S]; scale = 1/sqrt(head_dim) with head_dim 128. Category: fusions without convolution.
KernelBench origin: none (the softmax stage of unfused attention; eager runs the scaling, the masking and the
softmax as separate kernels). Memory-bound once fused: the visible (lower) triangle is read, every element
written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "fusion"
CASES = [
    {"B": 4, "H": 16, "S": 1024, "dtype": "float32"},
    {"B": 2, "H": 32, "S": 2048, "dtype": "float32"},
    {"B": 1, "H": 16, "S": 4096, "dtype": "float32"},
    {"B": 4, "H": 12, "S": 1000, "dtype": "float32"},
    {"B": 1, "H": 16, "S": 4096, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 16, "dtype": "float32"}, {"B": 2, "H": 1, "S": 20, "dtype": "bfloat16"}]


class Model(nn.Module):
    def __init__(self, scale: float = 128**-0.5):
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        S = scores.shape[-1]
        causal = torch.ones(S, S, dtype=torch.bool, device=scores.device).triu(1)
        return torch.softmax((scores * self.scale).masked_fill(causal, float("-inf")), dim=-1)


def get_inputs(B: int = 1, H: int = 8, S: int = 512, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(B, H, S, S, dtype=getattr(torch, dtype)) * 8.0]


def get_init_inputs(**case) -> list:
    return [128**-0.5]


def flops(B: int, H: int, S: int, **_) -> float:
    return 6.0 * B * H * S * S


def bytes_moved(B: int, H: int, S: int, dtype: str = "float32") -> float:
    # the causal mask hides the upper triangle: at least the lower half is read, every element is written
    return 1.5 * B * H * S * S * getattr(torch, dtype).itemsize
