"""GPTQ W4A16 decode GEMM: out = a @ dequant(b), int4 weights in groups of 128 along K (applied-ai's kernel).

Category: gemv (skinny-M quantized matmul). Source: pytorch-labs/applied-ai
kernels/triton/inference/gptq/splitk_dequant_gemm.py (see SOURCE.md).
b packs 8 int4 weights per int32 along K; w[k, n] = (q[k, n] - (qz[g, n] + 1)) * scales[g, n] with g = k // 128
and qz the packed zero points. The kernel splits K four ways and adds fp16 partials atomically; it has no masks,
so M must be a multiple of 16, N of 32 and K of 512. Memory-bound at decode sizes: the int4 weights dominate.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "gemv"
GROUP = 128
CASES = [
    {"M": 16, "N": 28672, "K": 8192},
    {"M": 16, "N": 8192, "K": 28672},
    {"M": 32, "N": 16384, "K": 16384},
    {"M": 64, "N": 14336, "K": 4096},
]
SMOKE_CASES = [{"M": 16, "N": 64, "K": 512}, {"M": 32, "N": 32, "K": 1024}]
#: four fp16 split-K partials are added with fp16 atomics, so the result carries fp16 rounding of each partial.
TOLERANCES = {"float16": {"atol": 2e-2, "rtol": 1e-2}}


def dequantize(b: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    """The (K, N) fp32 weights that packed int4 ``b`` (K/8, N), ``scales`` (K/128, N), ``zeros`` (K/128, N/8) hold."""
    K, N = b.shape[0] * 8, b.shape[1]
    shifts = torch.arange(8, device=b.device, dtype=torch.int32) * 4
    q = ((b[:, None, :] >> shifts[None, :, None]) & 0xF).reshape(K, N).float()
    z = ((zeros[:, :, None] >> shifts[None, None, :]) & 0xF).reshape(zeros.shape[0], N).float()
    s = scales.float()
    return q * s.repeat_interleave(GROUP, dim=0) - ((z + 1) * s).repeat_interleave(GROUP, dim=0)


class Model(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
        return (a.float() @ dequantize(b, scales, zeros)).to(torch.float16)


def get_inputs(M: int = 16, N: int = 4096, K: int = 4096) -> list[torch.Tensor]:
    i32 = torch.iinfo(torch.int32)
    return [
        torch.randn(M, K, dtype=torch.float16) * 0.5,
        torch.randint(i32.min, i32.max, (K // 8, N), dtype=torch.int32),
        (torch.rand(K // GROUP, N) * 0.01 + 0.002).to(torch.float16),
        torch.randint(i32.min, i32.max, (K // GROUP, N // 8), dtype=torch.int32),
    ]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return K * N / 2.0 + 2.0 * (M * K + M * N) + (K // GROUP) * N * 2.5
