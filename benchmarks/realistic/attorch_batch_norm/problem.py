"""Training-mode BatchNorm2d fused with a residual add and ReLU (a ResNet block's tail), attorch's kernel.

Category: norm. Source: BobMcDear/attorch attorch/batch_norm_kernels.py + batch_norm_layer.py (see SOURCE.md).
One program per channel computes the batch statistics over N x H x W (Welford-style, blocks of at most 16384
elements), updates the running mean and variance in place (momentum 0.1, unbiased variance), then writes
relu(w * x_hat + b + residual). Memory-bound: x read twice, residual once, output once.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "norm"
INPLACE_OUTPUTS = [2, 3]
CASES = [
    {"N": 64, "C": 256, "HW": 3136, "dtype": "float32"},
    {"N": 64, "C": 512, "HW": 784, "dtype": "float16"},
    {"N": 128, "C": 64, "HW": 3136, "dtype": "float32"},
    {"N": 32, "C": 1024, "HW": 196, "dtype": "float16"},
]
SMOKE_CASES = [{"N": 3, "C": 4, "HW": 30, "dtype": "float32"}, {"N": 5, "C": 3, "HW": 16, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, C: int, dtype: str = "float32"):
        super().__init__()
        dt = getattr(torch, dtype)
        self.weight = nn.Parameter(torch.empty(C).uniform_(0.5, 1.5).to(dt))
        self.bias = nn.Parameter(torch.empty(C).uniform_(-0.5, 0.5).to(dt))

    def forward(self, x, residual, running_mean, running_var):
        y = F.batch_norm(x.float(), running_mean, running_var, self.weight.float(), self.bias.float(),
                         training=True, momentum=0.1, eps=1e-5)
        return torch.relu(y + residual.float()).to(x.dtype)


def get_inputs(N: int = 8, C: int = 64, HW: int = 196, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(N, C, HW, dtype=dt) * 2 + 0.5, torch.randn(N, C, HW, dtype=dt), torch.zeros(C), torch.ones(C)]


def get_init_inputs(C: int = 64, dtype: str = "float32", **_) -> list:
    return [C, dtype]


def flops(N: int, C: int, HW: int, **_) -> float:
    return 10.0 * N * C * HW


def bytes_moved(N: int, C: int, HW: int, dtype: str = "float32") -> float:
    return 4.0 * N * C * HW * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
