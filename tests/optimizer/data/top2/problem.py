"""Top-2 sum per expert group (MoE routing score): out[t, g] = sum of the two largest scores of group g.

Test copy of the suite's moe_group_top2 shape, with small SMOKE_CASES including exact ties.
"""

import torch
import torch.nn as nn

CASES = [{"T": 131072, "E": 256, "G": 8}]
SMOKE_CASES = [{"T": 16, "E": 256, "G": 8}, {"T": 7, "E": 64, "G": 4}]


class Model(nn.Module):
    def __init__(self, n_groups: int = 8):
        super().__init__()
        self.n_groups = n_groups

    def forward(self, scores):
        T, E = scores.shape
        return scores.view(T, self.n_groups, E // self.n_groups).topk(2, dim=-1)[0].sum(dim=-1)


def get_inputs(T=16, E=256, G=8):
    x = torch.randn(T, E).sigmoid()
    x[0, :2] = x[0].max() + 0.25  # an exact tie for the group maximum: top-2 must count both
    return [x]


def get_init_inputs(G=8, **_):
    return [G]


def flops(T, E, G):
    return 2.0 * T * E


def bytes_moved(T, E, G):
    return 4.0 * (T * E + T * G)
