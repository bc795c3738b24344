"""Grouped GEMM: four independent fp16 matmuls C_i = A_i B_i in one persistent launch (Triton tutorial 08).

Category: matmul. Source: triton-lang/triton python/tutorials/08-grouped-gemm.py (see SOURCE.md).
A fixed number of programs (NUM_SM, autotuned with the tiles) walks the tiles of every problem in turn, reading
each problem's pointers, sizes and leading dims from device tables. The kernel assumes full tiles: every M, N is
a multiple of 128 and every K of 64 (the tutorial's own sizes are 128..1024).
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "matmul"
CASES = [
    {"M": [1024, 512, 256, 128], "N": 4096, "K": 4096},
    {"M": [4096, 4096, 2048, 1024], "N": 1024, "K": 4096},
    {"M": [8192, 256, 2048, 128], "N": 2048, "K": 2048},
    {"M": [2048, 2048, 2048, 2048], "N": 4096, "K": 1024},
]
SMOKE_CASES = [{"M": [128, 256, 128, 128], "N": 128, "K": 64}]
#: the kernel has no masks: sizes must stay multiples of 128 (M, N) and 64 (K), so no derived odd-sized case
UNSEEN_CASES = [{"M": [1536, 768, 384, 128], "N": 2048, "K": 3072}]


class Model(nn.Module):
    def forward(self, a0, b0, a1, b1, a2, b2, a3, b3):
        return tuple((a.float() @ b.float()).to(a.dtype) for a, b in ((a0, b0), (a1, b1), (a2, b2), (a3, b3)))


def get_inputs(M=(1024, 512, 256, 128), N: int = 1024, K: int = 1024) -> list[torch.Tensor]:
    out = []
    for m in M:
        out += [torch.rand(m, K, dtype=torch.float16), torch.rand(K, N, dtype=torch.float16)]
    return out


def get_init_inputs(**_) -> list:
    return []


def flops(M, N: int, K: int) -> float:
    return 2.0 * sum(M) * N * K


def bytes_moved(M, N: int, K: int) -> float:
    return 2.0 * sum(m * K + K * N + m * N for m in M)


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
