"""Affine y = x * scale + shift over fp16 activations whose sizes are multiples of 4096 (hidden x tokens).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: one read and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 268435456}, {"n": 67108864}]
SMOKE_CASES = [{"n": 8192}, {"n": 4096}]
TOLERANCES = {"float16": {"atol": 1e-2, "rtol": 1e-2}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x.float() * 1.25 + 0.5).half()


def get_inputs(n: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(n).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return 2.0 * n


def bytes_moved(n: int) -> float:
    return 4.0 * n
