"""Scale-and-shift: an elementwise KernelBench-format problem with SMOKE_CASES and roofline figures."""

import torch
import torch.nn as nn

CASES = [{"N": 1 << 24}]
SMOKE_CASES = [{"N": 3000}, {"N": 1024}]


class Model(nn.Module):
    def __init__(self, alpha: float = 2.0, beta: float = 0.5):
        super().__init__()
        self.alpha, self.beta = alpha, beta

    def forward(self, x):
        return x * self.alpha + self.beta


def get_inputs(N=4096):
    return [torch.randn(N)]


def get_init_inputs(**case):
    return [2.0, 0.5]


def flops(N=4096):
    return 2.0 * N


def bytes_moved(N=4096):
    return 8.0 * N
