"""Rotary position embedding of q and k in place (HF LLaMA convention, rotate_half), Liger-Kernel's kernel.

Category: rotary. Source: linkedin/Liger-Kernel src/liger_kernel/ops/rope.py (see SOURCE.md).
q (B, S, Hq, D) and k (B, S, Hk, D) are rotated in place by cos/sin (1, S, D) whose two halves repeat: the
result is the mutated q and k (INPLACE_OUTPUTS), also returned. Memory-bound: q and k read and written once.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "rotary"
INPLACE_OUTPUTS = [0, 1]
CASES = [
    {"B": 4, "S": 8192, "Hq": 32, "Hk": 8, "D": 128, "dtype": "bfloat16"},
    {"B": 8, "S": 4096, "Hq": 32, "Hk": 32, "D": 128, "dtype": "bfloat16"},
    {"B": 2, "S": 8192, "Hq": 28, "Hk": 4, "D": 128, "dtype": "float32"},
    {"B": 16, "S": 2048, "Hq": 16, "Hk": 16, "D": 64, "dtype": "float16"},
]
SMOKE_CASES = [
    {"B": 2, "S": 5, "Hq": 4, "Hk": 2, "D": 16, "dtype": "float32"},
    {"B": 1, "S": 3, "Hq": 3, "Hk": 1, "D": 32, "dtype": "float16"},
]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        c, s = cos.float().unsqueeze(2), sin.float().unsqueeze(2)  # (1, S, 1, D) against (B, S, H, D)
        q.copy_(q.float() * c + _rotate_half(q.float()) * s)
        k.copy_(k.float() * c + _rotate_half(k.float()) * s)
        return q, k


def get_inputs(B: int = 2, S: int = 128, Hq: int = 8, Hk: int = 8, D: int = 64,
               dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    freqs = torch.outer(torch.arange(S, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)[None]
    return [torch.randn(B, S, Hq, D, dtype=dt), torch.randn(B, S, Hk, D, dtype=dt),
            emb.cos().to(dt), emb.sin().to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, S: int, Hq: int, Hk: int, D: int, **_) -> float:
    return 3.0 * B * S * (Hq + Hk) * D


def bytes_moved(B: int, S: int, Hq: int, Hk: int, D: int, dtype: str = "float32") -> float:
    return (2.0 * B * S * (Hq + Hk) * D + 2.0 * S * D) * getattr(torch, dtype).itemsize
