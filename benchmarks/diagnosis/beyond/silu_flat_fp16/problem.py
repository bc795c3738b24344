"""SiLU gate y = a * sigmoid(a) * b over flat fp16 tensors.

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: two reads and one write per element.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"n": 134217728}, {"n": 50331648}]
SMOKE_CASES = [{"n": 3000}, {"n": 1024}]
TOLERANCES = {"float16": {"atol": 1e-2, "rtol": 1e-2}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        af = a.float()
        return (af * torch.sigmoid(af) * b.float()).half()


def get_inputs(n: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(n).half(), torch.randn(n).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(n: int) -> float:
    return 5.0 * n


def bytes_moved(n: int) -> float:
    return 6.0 * n
