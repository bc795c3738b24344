"""Softmax of fp16 attention scores [B, H, S, S] over the key dimension, for short sequences.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Small and memory-bound: B*H*S*S halves read and written; a few microseconds of work at best.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"B": 2, "H": 16, "S": 256}, {"B": 1, "H": 32, "S": 128}]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 24}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores.float(), dim=-1).to(scores.dtype)


def get_inputs(B: int = 1, H: int = 2, S: int = 32) -> list[torch.Tensor]:
    return [(torch.randn(B, H, S, S) * 2.0).to(torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int) -> float:
    return 5.0 * B * H * S * S


def bytes_moved(B: int, H: int, S: int) -> float:
    return 2.0 * B * H * S * S * 2
