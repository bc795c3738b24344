"""Per-channel mean and reciprocal standard deviation of fp16 activations laid out rows x channels.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: every element read once; the output is two fp32 values per channel.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"R": 16384, "C": 10240}, {"R": 32768, "C": 4352}, {"R": 8192, "C": 10240}]
SMOKE_CASES = [{"R": 53, "C": 130}, {"R": 16, "C": 64}]
EPS = 1e-5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        mean = xf.mean(dim=0)
        var = xf.var(dim=0, unbiased=False)
        return torch.stack([mean, torch.rsqrt(var + EPS)])


def get_inputs(R: int = 64, C: int = 64) -> list[torch.Tensor]:
    return [torch.randn(R, C).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(R: int, C: int) -> float:
    return 3.0 * R * C


def bytes_moved(R: int, C: int) -> float:
    return 2.0 * R * C + 8.0 * C
