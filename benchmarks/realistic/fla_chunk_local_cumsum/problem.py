"""Chunk-local cumulative sum along time of a (B, T, H, S) tensor in chunks of 64, fp32 output (fla's kernel).

Category: scan. Source: fla-org/flash-linear-attention fla/ops/utils/cumsum.py (see SOURCE.md).
The gate cumsum of chunked linear-attention kernels: within each chunk of 64 time steps, a running sum per
(batch, head, feature). Memory-bound: one read in the input dtype, one fp32 write.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "scan"
CASES = [
    {"B": 8, "T": 8192, "H": 16, "S": 128, "dtype": "bfloat16"},
    {"B": 4, "T": 16384, "H": 32, "S": 64, "dtype": "float32"},
    {"B": 16, "T": 4096, "H": 8, "S": 256, "dtype": "bfloat16"},
    {"B": 2, "T": 32000, "H": 16, "S": 128, "dtype": "float16"},
]
SMOKE_CASES = [
    {"B": 2, "T": 100, "H": 2, "S": 40, "dtype": "float32"},
    {"B": 1, "T": 64, "H": 3, "S": 16, "dtype": "float16"},
]


class Model(nn.Module):
    def __init__(self, chunk_size: int = 64):
        super().__init__()
        self.chunk_size = chunk_size

    def forward(self, g: torch.Tensor) -> torch.Tensor:
        B, T, H, S = g.shape
        pad = (-T) % self.chunk_size
        x = torch.nn.functional.pad(g.float(), (0, 0, 0, 0, 0, pad))
        x = x.view(B, -1, self.chunk_size, H, S).cumsum(dim=2).view(B, T + pad, H, S)
        return x[:, :T].contiguous()


def get_inputs(B: int = 2, T: int = 1024, H: int = 4, S: int = 64, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(B, T, H, S, dtype=getattr(torch, dtype))]


def get_init_inputs(**_) -> list:
    return [64]


def flops(B: int, T: int, H: int, S: int, **_) -> float:
    return 1.0 * B * T * H * S


def bytes_moved(B: int, T: int, H: int, S: int, dtype: str = "float32") -> float:
    return B * T * H * S * (getattr(torch, dtype).itemsize + 4.0)
