"""Row-wise L2 normalization: y = x / ||x||_2 over dim 1 of a 2-D tensor.

Category: reductions, norms, softmax and log-softmax. KernelBench origin: level1/39_L2Norm_ (shapes resized for
an H200). Memory-bound: one read and one write per element, a sum of squares per row.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "reduction"
CASES = [
    {"M": 65536, "N": 1024, "dtype": "float32"},
    {"M": 16384, "N": 4096, "dtype": "float32"},
    {"M": 4096, "N": 16384, "dtype": "float32"},
    {"M": 32768, "N": 3000, "dtype": "float32"},
    {"M": 32768, "N": 4096, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 8, "N": 128, "dtype": "float32"}, {"M": 5, "N": 300, "dtype": "bfloat16"}]
#: sizes the optimizer session never sees: the selected best is validated and timed on them afterwards
UNSEEN_CASES = [{"M": 6007, "N": 5003, "dtype": "float32"}, {"M": 20011, "N": 1531, "dtype": "bfloat16"}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs(M: int = 1024, N: int = 1024, dtype: str = "float32") -> list[torch.Tensor]:
    return [torch.randn(M, N, dtype=getattr(torch, dtype))]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, N: int, **_) -> float:
    return 3.0 * M * N


def bytes_moved(M: int, N: int, dtype: str = "float32") -> float:
    return 2.0 * M * N * getattr(torch, dtype).itemsize
