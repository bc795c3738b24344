"""Cross-entropy loss over class logits with integer targets, mean over the batch: F.cross_entropy(logits, y).

Category: losses. KernelBench origin: level1/95_CrossEntropyLoss (there with 10 classes; here with vocabulary-
sized class counts, shapes sized for an H200). Memory-bound: the logits are read once (a log-sum-exp per row).
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "loss"
CASES = [
    {"M": 65536, "C": 1024},
    {"M": 16384, "C": 4096},
    {"M": 8192, "C": 32000},
    {"M": 4096, "C": 50257},
    {"M": 32768, "C": 2048},
]
SMOKE_CASES = [{"M": 8, "C": 100}, {"M": 5, "C": 2500}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(logits, targets)


def get_inputs(M: int = 1024, C: int = 1024) -> list[torch.Tensor]:
    return [torch.randn(M, C), torch.randint(0, C, (M,))]


def get_init_inputs(**case) -> list:
    return []


def flops(M: int, C: int) -> float:
    return 4.0 * M * C


def bytes_moved(M: int, C: int) -> float:
    return 4.0 * M * C + 8.0 * M
