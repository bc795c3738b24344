"""Causal fused attention forward (online softmax), fp16, (B, H, S, D): attorch's copy of triton-lang/kernels' kernel.

Category: attention. Source: BobMcDear/attorch attorch/multi_head_attention_kernels.py (see SOURCE.md).
o = softmax(q k^T / sqrt(D), causal) v with an online softmax over 64-key blocks, 128 queries per program;
block pointers (tl.make_block_ptr / tl.advance) for K, V and O. No query masks: S must be a multiple of 128.
Compute-bound at these sizes.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "attention"
#: tl.make_block_ptr / tl.advance were removed in Triton 3.7; the GPU image's Triton 3.6 has them.
CPU_VALIDATION = "compile_only"
CASES = [
    {"B": 4, "H": 32, "S": 4096, "D": 128},
    {"B": 16, "H": 16, "S": 2048, "D": 64},
    {"B": 1, "H": 32, "S": 16384, "D": 128},
    {"B": 8, "H": 32, "S": 1024, "D": 128},
]
SMOKE_CASES = [{"B": 1, "H": 2, "S": 128, "D": 64}, {"B": 2, "H": 1, "S": 256, "D": 32}]


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        o = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True,
                                           scale=1.0 / math.sqrt(q.shape[-1]))
        return o.to(q.dtype)


def get_inputs(B: int = 2, H: int = 4, S: int = 512, D: int = 64) -> list[torch.Tensor]:
    return [torch.randn(B, H, S, D, dtype=torch.float16) for _ in range(3)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, H: int, S: int, D: int) -> float:
    return 2.0 * B * H * S * S * D  # causal: half of the 4*B*H*S^2*D of full attention


def bytes_moved(B: int, H: int, S: int, D: int) -> float:
    return 4.0 * B * H * S * D * 2 + 4.0 * B * H * S
