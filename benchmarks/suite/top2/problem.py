"""Top-2 values of each row of a 2-D tensor, largest first: torch.topk(x, 2, dim=-1).values.

Category: argmax / top-k style ops. KernelBench origin: none (level 1 has no top-k; this is the dense core of
MoE routing and beam search). Memory-bound: the input is read once, two values per row are written.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "argmax_topk"
CASES = [
    {"M": 65536, "N": 1024},
    {"M": 16384, "N": 4096},
    {"M": 8192, "N": 8192},
    {"M": 4096, "N": 16384},
    {"M": 40000, "N": 3000},
]
SMOKE_CASES = [{"M": 8, "N": 100}, {"M": 5, "N": 300}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003}, {"M": 20011, "N": 1531}]


class Model(nn.Module):
    def __init__(self, k: int = 2):
        super().__init__()
        self.k = k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.topk(x, self.k, dim=-1).values


def get_inputs(M: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, N)]


def get_init_inputs(**case) -> list:
    return [2]


def flops(M: int, N: int) -> float:
    return 2.0 * M * N


def bytes_moved(M: int, N: int) -> float:
    return 4.0 * M * N + 8.0 * M
