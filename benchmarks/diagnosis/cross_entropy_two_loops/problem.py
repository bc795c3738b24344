"""Per-token cross-entropy of fp32 logits over a large vocabulary (reduction='none').

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound: M*V logits read once at best, M losses written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 4096, "V": 32000}, {"M": 2048, "V": 50257}]
SMOKE_CASES = [{"M": 5, "V": 3000}, {"M": 3, "V": 500}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(logits, target, reduction="none")


def get_inputs(M: int = 64, V: int = 1000) -> list[torch.Tensor]:
    return [torch.randn(M, V) * 4.0, torch.randint(0, V, (M,))]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, V: int) -> float:
    return 4.0 * M * V


def bytes_moved(M: int, V: int) -> float:
    return 4.0 * M * V + 12.0 * M
