"""Mean negative log-likelihood over a segmentation map: log-probs [B, C, H*W], int64 targets [B, H*W].

Category: loss. Source: BobMcDear/attorch attorch/nll_loss_kernels.py + nll_loss_layer.py (see SOURCE.md).
Each program gathers -logp[target] for a block of rows and the whole spatial extent, divides by B*S and
stores one partial sum; the launcher finishes with `output.sum()` (attorch's own epilogue).
Gather-bound: one of C log-probs per pixel is read, plus the targets.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "loss"
ALLOWED_TORCH_OPS = ["sum"]
CASES = [
    {"B": 32, "C": 21, "S": 65536, "dtype": "float32"},
    {"B": 16, "C": 150, "S": 16384, "dtype": "float16"},
    {"B": 64, "C": 19, "S": 32768, "dtype": "bfloat16"},
    {"B": 8, "C": 21, "S": 262144, "dtype": "float32"},
]
SMOKE_CASES = [{"B": 3, "C": 5, "S": 40, "dtype": "float32"}, {"B": 2, "C": 7, "S": 64, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.nll_loss(x.float(), target).to(x.dtype)


def get_inputs(B: int = 8, C: int = 21, S: int = 4096, dtype: str = "float32") -> list[torch.Tensor]:
    logp = torch.log_softmax(torch.randn(B, C, S), dim=1).to(getattr(torch, dtype))
    return [logp, torch.randint(0, C, (B, S))]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, S: int, **_) -> float:
    return 2.0 * B * S


def bytes_moved(B: int, S: int, dtype: str = "float32", **_) -> float:
    return B * S * (getattr(torch, dtype).itemsize + 8.0)


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
