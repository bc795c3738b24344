"""Net flow per node of a batch of fp16 weighted graphs: out[b, i] = sum_j W[b, j, i] - sum_j W[b, i, j] (fp32 out).

Diagnosis benchmark item (benchmarks/diagnosis/README.md, items beyond the listed causes).
Memory-bound: every element read twice (once per direction).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CASES = [{"B": 8, "N": 8192}, {"B": 32, "N": 2048}]
SMOKE_CASES = [{"B": 2, "N": 90}, {"B": 1, "N": 64}]
TOLERANCES = {"float32": {"atol": 2e-2, "rtol": 1e-3}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, W: torch.Tensor) -> torch.Tensor:
        w = W.float()
        return w.sum(dim=1) - w.sum(dim=2)


def get_inputs(B: int = 2, N: int = 64) -> list[torch.Tensor]:
    return [torch.rand(B, N, N).half()]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, N: int) -> float:
    return 2.0 * B * N * N


def bytes_moved(B: int, N: int) -> float:
    return 2.0 * B * N * N + 4.0 * B * N
