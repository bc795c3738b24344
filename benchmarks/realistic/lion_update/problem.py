"""One Lion optimizer step on a parameter tensor, in place (lucidrains/lion-pytorch's Triton update).

Category: optimizer. Source: lucidrains/lion-pytorch lion_pytorch/triton.py (see SOURCE.md).
p <- p * (1 - lr * wd) - lr * sign(beta1 * m + (1 - beta1) * g); m <- beta2 * m + (1 - beta2) * g, with lr 1e-4,
wd 0.01, betas (0.9, 0.99). p and m are updated in place (INPLACE_OUTPUTS). Memory-bound: three reads, two writes.
The reference is lion-pytorch's own torch `update_fn`.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "elementwise"
INPLACE_OUTPUTS = [0, 2]
CASES = [
    {"N": 58720256},
    {"N": 16777216},
    {"N": 134217728},
    {"N": 4194304},
]
SMOKE_CASES = [{"N": 300}, {"N": 2048}]


class Model(nn.Module):
    def forward(self, p: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor) -> None:
        lr, wd, beta1, beta2 = 1e-4, 0.01, 0.9, 0.99
        p.data.mul_(1. - lr * wd)
        update = exp_avg.clone().mul_(beta1).add(grad, alpha=1. - beta1).sign_()
        p.add_(update, alpha=-lr)
        exp_avg.mul_(beta2).add_(grad, alpha=1. - beta2)


def get_inputs(N: int = 4096) -> list[torch.Tensor]:
    return [torch.randn(N), torch.randn(N), torch.randn(N) * 0.1]


def get_init_inputs(**_) -> list:
    return []


def flops(N: int) -> float:
    return 10.0 * N


def bytes_moved(N: int) -> float:
    return 20.0 * N


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
