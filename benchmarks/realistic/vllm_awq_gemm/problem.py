"""AWQ W4A16 GEMM (vLLM's Triton kernel): out = x @ dequant(qweight), dequantized inside the K loop.

Category: matmul (quantized, with a torch epilogue). Source: vllm-project/vllm
vllm/model_executor/layers/quantization/awq_triton.py (see SOURCE.md). The kernel accumulates in fp16 (the
output dtype), splits K eight ways (vLLM passes its pack factor 8 as split_k_iters) into an (8, M, N) buffer,
and the launcher ends with ``result.sum(0)`` (declared in ALLOWED_TORCH_OPS). 32x32x32 tiles, no autotuning.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "matmul"
ALLOWED_TORCH_OPS = ["sum"]
GROUP = 128
CASES = [
    {"M": 16, "N": 28672, "K": 8192},
    {"M": 256, "N": 14336, "K": 4096},
    {"M": 1024, "N": 4096, "K": 4096},
    {"M": 64, "N": 8192, "K": 28672},
]
SMOKE_CASES = [{"M": 16, "N": 64, "K": 256}, {"M": 5, "N": 40, "K": 384}]
#: fp16 accumulation in the kernel and an fp16 sum of eight split-K partials.
TOLERANCES = {"float16": {"atol": 3e-2, "rtol": 2e-2}}
AWQ_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def unpack_awq(packed: torch.Tensor) -> torch.Tensor:
    """(R, C) int32 -> (R, 8C) int32 nibbles, column 8c + j from shift 4 * AWQ_ORDER[j] of word c."""
    shifts = torch.tensor(AWQ_ORDER, dtype=torch.int32, device=packed.device) * 4
    return ((packed[:, :, None] >> shifts) & 0xF).reshape(packed.shape[0], -1)


def dequantize(qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
    group = qweight.shape[0] // scales.shape[0]
    q = unpack_awq(qweight).float()
    z = unpack_awq(zeros).float().repeat_interleave(group, dim=0)
    return (q - z) * scales.float().repeat_interleave(group, dim=0)


class Model(nn.Module):
    def __init__(self, split_k_iters: int = 8):
        super().__init__()
        self.split_k_iters = split_k_iters

    def forward(self, x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor):
        w = dequantize(qweight, scales, qzeros).to(torch.float16).float()  # the kernel rounds b to fp16 first
        return (x.float() @ w).to(torch.float16)


def get_inputs(M: int = 16, N: int = 1024, K: int = 1024) -> list[torch.Tensor]:
    i32 = torch.iinfo(torch.int32)
    return [torch.randn(M, K, dtype=torch.float16) * 0.1,
            torch.randint(i32.min, i32.max, (K, N // 8), dtype=torch.int32),
            (torch.rand(K // GROUP, N) * 0.004 + 0.001).to(torch.float16),
            torch.randint(i32.min, i32.max, (K // GROUP, N // 8), dtype=torch.int32)]


def get_init_inputs(**_) -> list:
    return [8]


def flops(M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K


def bytes_moved(M: int, N: int, K: int) -> float:
    return K * N / 2.0 + 2.0 * M * K + 2.0 * 8 * M * N * 2 + (K // GROUP) * N * 2.5
