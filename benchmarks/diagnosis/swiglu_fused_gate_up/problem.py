"""SwiGLU on a fused gate/up projection: silu(x[:, :F]) * x[:, F:] for fp16 activations of width 2F.

Diagnosis benchmark item (benchmarks/diagnosis/README.md).
Memory-bound elementwise: 2F halves read and F written per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"M": 32768, "F": 1400}, {"M": 16384, "F": 2744}]
SMOKE_CASES = [{"M": 4, "F": 200}, {"M": 3, "F": 36}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return nn.functional.silu(gate) * up


def get_inputs(M: int = 64, F: int = 200) -> list[torch.Tensor]:
    return [torch.randn(M, 2 * F, dtype=torch.float16)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, F: int) -> float:
    return 5.0 * M * F


def bytes_moved(M: int, F: int) -> float:
    return 3.0 * M * F * 2
