"""Reverse cumulative sum along time of a (B, T, H) tensor, fp32 output (fla's global scalar kernel).

Category: scan. Source: fla-org/flash-linear-attention fla/ops/utils/cumsum.py (see SOURCE.md).
o[b, t, h] = sum over t' >= t of s[b, t', h]. One program per (batch, head) walks the sequence backwards in
chunks, carrying the running total. Memory-bound: one read, one fp32 write; autotuned over 48 configs.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "scan"
CASES = [
    {"B": 16, "T": 65536, "H": 32, "dtype": "float32"},
    {"B": 8, "T": 131072, "H": 16, "dtype": "bfloat16"},
    {"B": 64, "T": 16384, "H": 32, "dtype": "float32"},
    {"B": 4, "T": 262144, "H": 16, "dtype": "float32"},
]
#: a running sum over 262144 steps accumulates rounding in both the reference and the kernel, summed in different
#: orders: partial sums reach ~1e3, so the fp32 random-walk bound is ~sqrt(T) x 6e-8 x 1e3 = 0.03 at T=262144. The
#: H200 measured max |err| 0.0249 there (0.0065 at T=65536) with atol 5e-3, which failed 17112 of 16.8M elements.
TOLERANCES = {"float32": {"atol": 5e-2, "rtol": 1e-4}}
SMOKE_CASES = [{"B": 2, "T": 70, "H": 3, "dtype": "float32"}, {"B": 1, "T": 33, "H": 2, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, s: torch.Tensor) -> torch.Tensor:
        return s.float().flip(1).cumsum(dim=1).flip(1)


def get_inputs(B: int = 2, T: int = 1024, H: int = 4, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(B, T, H, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, T: int, H: int, **_) -> float:
    return 1.0 * B * T * H


def bytes_moved(B: int, T: int, H: int, dtype: str = "float32") -> float:
    return B * T * H * (getattr(torch, dtype).itemsize + 4.0)
