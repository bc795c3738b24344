"""MoE group score (DeepSeek-V3 routing): per token and expert group, the sum of the group's two largest scores.

scores [T, E] with E experts in G groups of E // G (DeepSeek-V3: 256 experts, 8 groups of 32);
out[t, g] = top-2 sum of scores[t, g*E/G : (g+1)*E/G], i.e. scores.view(T, G, -1).topk(2, dim=-1)[0].sum(-1).

Category: argmax / top-k style ops. KernelBench origin: none (DeepSeek-V3 ``MoEGate`` with
``topk_method="noaux_tc"``). Memory-bound: the scores are read once and G values per token are written.
Measured on an H200 at T=131072 (the first case): one group per program 0.636 ms, 32 groups per program
0.045 ms, roofline 0.032 ms.
"""

from __future__ import annotations

import torch
import torch.nn as nn

CATEGORY = "argmax_topk"
CASES = [
    {"T": 131072, "E": 256, "G": 8},
    {"T": 262144, "E": 256, "G": 8},
    {"T": 300007, "E": 256, "G": 8},
    {"T": 524288, "E": 256, "G": 8},
    {"T": 1048576, "E": 256, "G": 8},
]
SMOKE_CASES = [{"T": 16, "E": 256, "G": 8}, {"T": 7, "E": 64, "G": 4}]


class Model(nn.Module):
    def __init__(self, n_groups: int = 8):
        super().__init__()
        self.n_groups = n_groups

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        T, E = scores.shape
        return scores.view(T, self.n_groups, E // self.n_groups).topk(2, dim=-1)[0].sum(dim=-1)


def get_inputs(T: int = 4096, E: int = 256, G: int = 8) -> list[torch.Tensor]:
    return [torch.randn(T, E).sigmoid()]  # DeepSeek-V3 scores are sigmoid outputs


def get_init_inputs(G: int = 8, **_) -> list:
    return [G]


def flops(T: int, E: int, G: int) -> float:
    return 2.0 * T * E + T * G


def bytes_moved(T: int, E: int, G: int) -> float:
    return 4.0 * (T * E + T * G)
