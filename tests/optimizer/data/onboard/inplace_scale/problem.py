"""In-place scale-and-shift: the reference mutates its input (its result is that input)."""
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, alpha: float = 2.0):
        x.mul_(alpha).add_(1.0)
        return x


def get_inputs(n=1000):
    return [torch.randn(n), 2.0]


def get_init_inputs(**_):
    return []


SMOKE_CASES = [{"n": 1000}]
INPLACE_OUTPUTS = [0]
