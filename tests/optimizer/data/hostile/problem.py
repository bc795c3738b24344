"""The red team's problem: x + y (issue 32). A wrong kernel computes x + x."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y):
        return x + y


def get_inputs(n=256):
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs(**_):
    return []


SMOKE_CASES = [{"n": 256}]
