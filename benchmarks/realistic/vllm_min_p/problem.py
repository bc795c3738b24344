"""Min-p sampling filter (vLLM's GPU model runner): logits below max + log(min_p) become -inf, row by row, in place.

Category: sampling. Source: vllm-project/vllm vllm/v1/worker/gpu/sample/min_p.py (see SOURCE.md).
Each request row maps to its sampling state through idx_mapping; rows whose min_p is 0 are left untouched
(here every fourth request). Two passes over the vocabulary (max, then filter); logits are fp32 as in vLLM's
sampler. Memory-bound: two reads and one write of each row.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "sampling"
INPLACE_OUTPUTS = [0]
CASES = [
    {"R": 256, "V": 128256},
    {"R": 1024, "V": 151936},
    {"R": 64, "V": 256000},
    {"R": 512, "V": 32000},
]
SMOKE_CASES = [{"R": 5, "V": 3000}, {"R": 4, "V": 1024}]


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, idx_mapping: torch.Tensor, min_p: torch.Tensor) -> None:
        mp = min_p[idx_mapping.long()].float()
        threshold = logits.float().amax(dim=-1) + torch.log(mp)
        drop = (logits < threshold[:, None]) & (mp != 0)[:, None]
        logits.masked_fill_(drop, float("-inf"))


def get_inputs(R: int = 8, V: int = 32000) -> list[torch.Tensor]:
    logits = torch.randn(R, V) * 3
    idx_mapping = torch.randperm(R).to(torch.int32)
    min_p = torch.rand(R) * 0.2 + 0.01
    min_p[::4] = 0.0
    return [logits, idx_mapping, min_p]


def get_init_inputs(**_) -> list:
    return []


def flops(R: int, V: int) -> float:
    return 2.0 * R * V


def bytes_moved(R: int, V: int) -> float:
    return 12.0 * R * V


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
