"""Gather rows of two sources by index and concatenate them flat (xFormers' index_select_cat forward).

Category: gather. Source: facebookresearch/xformers xformers/ops/_triton/k_index_select_cat.py (SOURCE.md).
out = cat([src_a[idx_a].flatten(), src_b[idx_b].flatten()]). Memory-bound: the selected rows are read once and
written once; one program per (index, 512 columns).
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "gather"
CASES = [
    {"R": 65536, "C": 4096, "n": 32768, "dtype": "bfloat16"},
    {"R": 131072, "C": 1024, "n": 98304, "dtype": "float32"},
    {"R": 32768, "C": 8192, "n": 16384, "dtype": "float16"},
    {"R": 262144, "C": 768, "n": 131072, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"R": 20, "C": 600, "n": 7, "dtype": "float32"}, {"R": 9, "C": 64, "n": 5, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, src_a: torch.Tensor, src_b: torch.Tensor, idx_a: torch.Tensor, idx_b: torch.Tensor):
        return torch.cat([src_a[idx_a].flatten(), src_b[idx_b].flatten()])


def get_inputs(R: int = 1024, C: int = 1024, n: int = 512, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(R, C, dtype=dt), torch.randn(R // 2, C, dtype=dt),
            torch.randperm(R)[:n], torch.randperm(R // 2)[: n // 2]]


def get_init_inputs(**_) -> list:
    return []


def flops(R: int, C: int, n: int, **_) -> float:
    return 1.0 * (n + n // 2) * C


def bytes_moved(R: int, C: int, n: int, dtype: str = "float32") -> float:
    return 2.0 * (n + n // 2) * C * getattr(torch, dtype).itemsize + 8.0 * (n + n // 2)
