"""tanh through libdevice: the 3.9 interpreter cannot run libdevice calls (compile-only on CPU)."""
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x)


def get_inputs(n=1000):
    return [torch.randn(n)]


def get_init_inputs(**_):
    return []


SMOKE_CASES = [{"n": 1000}]
