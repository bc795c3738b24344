"""W8A8 block-quantized int8 GEMM (SGLang, DeepSeek-style 128x128 weight blocks): C = (A*As) @ (B*Bs)^T.

Category: matmul (int8 dots with a per-block rescaling epilogue inside the K loop). Source: sgl-project/sglang
python/sglang/srt/layers/quantization/int8_kernel.py (see SOURCE.md). A (M, K) int8 with per-token-group
scales As (M, K/128); B (N, K) int8 with block scales Bs (N/128, K/128); output bf16 or fp16.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "matmul"
BLOCK = 128
CASES = [
    {"M": 4096, "N": 7168, "K": 7168, "dtype": "bfloat16"},
    {"M": 8192, "N": 4096, "K": 4096, "dtype": "bfloat16"},
    {"M": 2048, "N": 18432, "K": 7168, "dtype": "float16"},
    {"M": 16384, "N": 2048, "K": 7168, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"M": 20, "N": 256, "K": 256, "dtype": "float32"}, {"M": 70, "N": 128, "K": 384, "dtype": "float16"}]


class Model(nn.Module):
    def __init__(self, dtype: str = "bfloat16"):
        super().__init__()
        self.out_dtype = getattr(torch, dtype)

    def forward(self, a: torch.Tensor, b: torch.Tensor, a_s: torch.Tensor, b_s: torch.Tensor) -> torch.Tensor:
        a_deq = a.float() * a_s.repeat_interleave(BLOCK, dim=1)[:, : a.shape[1]]
        b_deq = b.float() * b_s.repeat_interleave(BLOCK, dim=0).repeat_interleave(BLOCK, dim=1)[: b.shape[0], : b.shape[1]]
        return (a_deq @ b_deq.t()).to(self.out_dtype)


def get_inputs(M: int = 256, N: int = 256, K: int = 256, dtype: str = "bfloat16") -> list[torch.Tensor]:
    return [torch.randint(-127, 128, (M, K), dtype=torch.int8), torch.randint(-127, 128, (N, K), dtype=torch.int8),
            torch.rand(M, K // BLOCK) * 1e-3 + 1e-4, torch.rand(N // BLOCK, K // BLOCK) * 1e-3 + 1e-4]


def get_init_inputs(dtype: str = "bfloat16", **_) -> list:
    return [dtype]


def flops(M: int, N: int, K: int, **_) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int, dtype: str = "bfloat16") -> float:
    return 1.0 * (M * K + N * K) + M * N * getattr(torch, dtype).itemsize
