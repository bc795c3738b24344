"""Row-wise softmax: a tiny KernelBench-format problem with our extensions (CASES, SMOKE_CASES, roofline)."""

import torch
import torch.nn as nn

CASES = [{"M": 4096, "N": 1024}, {"M": 8192, "N": 512}]
SMOKE_CASES = [{"M": 8, "N": 32}, {"M": 5, "N": 20}]
TOLERANCES = {"float32": {"atol": 1e-5, "rtol": 1e-4}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs(M=64, N=128):
    return [torch.randn(M, N)]


def get_init_inputs(**case):
    return []


def flops(M=64, N=128):
    return 5.0 * M * N


def bytes_moved(M=64, N=128):
    return 2.0 * 4 * M * N
