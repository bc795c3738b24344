"""Block-scaled fp8 GEMM, DeepSeek-V3's fp8_gemm: C = (A * a_s) @ (B * b_s)^T with fp8 e4m3 A [M, K], B [N, K].

Category: matmul. Source: deepseek-ai/DeepSeek-V3 inference/kernel.py (see SOURCE.md).
A carries one scale per row and 128 columns (act_quant's output), B one per 128x128 block. The kernel rescales
every K block's partial product in fp32; the output is torch's default dtype (fp32 here). 36-config autotune.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "matmul"
#: Hopper FP8 tensor-core MMA accumulates with reduced precision (DeepSeek-V3 report: about 14 bits), so the kernel
#: lands up to ~0.016 from the fp32 reference on O(1) outputs (H200, all four cases); a missing scale is far outside.
TOLERANCES = {"float32": {"atol": 2e-2, "rtol": 2e-2}}
CASES = [
    {"M": 4096, "N": 7168, "K": 2048},
    {"M": 2048, "N": 4096, "K": 7168},
    {"M": 128, "N": 18432, "K": 7168},
    {"M": 8192, "N": 2112, "K": 7168},
]
SMOKE_CASES = [{"M": 16, "N": 128, "K": 256}, {"M": 5, "N": 96, "K": 128}]


class Model(nn.Module):
    def forward(self, a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor):
        af = a.float() * a_s.repeat_interleave(128, 1)[:, : a.shape[1]]
        bs = b_s.repeat_interleave(128, 0)[: b.shape[0]].repeat_interleave(128, 1)[:, : b.shape[1]]
        return af @ (b.float() * bs).t()


def get_inputs(M: int = 1024, N: int = 1024, K: int = 1024) -> list[torch.Tensor]:
    a = (torch.randn(M, K) * 64).clamp(-448, 448).to(torch.float8_e4m3fn)
    b = (torch.randn(N, K) * 64).clamp(-448, 448).to(torch.float8_e4m3fn)
    a_s = torch.rand(M, (K + 127) // 128) * 1e-2 + 1e-3
    b_s = torch.rand((N + 127) // 128, (K + 127) // 128) * 1e-2 + 1e-3
    return [a, a_s, b, b_s]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return 1.0 * (M * K + N * K) + 4.0 * M * N


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
