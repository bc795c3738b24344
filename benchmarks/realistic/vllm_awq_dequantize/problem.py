"""AWQ int4 -> fp16 weight dequantization (vLLM's Triton kernel): w = (q - z) * s, AWQ nibble order.

Category: quantization. Source: vllm-project/vllm vllm/model_executor/layers/quantization/awq_triton.py
(see SOURCE.md). qweight (K, N/8) int32 packs 8 weights per word in AWQ order [0, 4, 1, 5, 2, 6, 3, 7]; zeros
(K/G, N/8) are packed the same way; scales (K/G, N) fp16; G = 128. Memory-bound: int4 in, fp16 out (4.5x more
bytes written than read).
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "quantization"
GROUP = 128
CASES = [
    {"K": 8192, "N": 28672},
    {"K": 28672, "N": 8192},
    {"K": 4096, "N": 14336},
    {"K": 16384, "N": 16384},
]
SMOKE_CASES = [{"K": 256, "N": 512}, {"K": 128, "N": 264}]
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
    def forward(self, qweight: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor) -> torch.Tensor:
        return dequantize(qweight, scales, zeros).to(scales.dtype)


def get_inputs(K: int = 1024, N: int = 1024) -> list[torch.Tensor]:
    i32 = torch.iinfo(torch.int32)
    return [torch.randint(i32.min, i32.max, (K, N // 8), dtype=torch.int32),
            (torch.rand(K // GROUP, N) * 0.01 + 0.002).to(torch.float16),
            torch.randint(i32.min, i32.max, (K // GROUP, N // 8), dtype=torch.int32)]


def get_init_inputs(**_) -> list:
    return []


def flops(K: int, N: int) -> float:
    return 2.0 * K * N


def bytes_moved(K: int, N: int) -> float:
    return K * N / 2.0 + 2.0 * K * N + (K // GROUP) * N * 2.5
