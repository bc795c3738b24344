"""MoE expert GEMM with routing weights (the down projection of a Mixtral-style MoE), vLLM's fused_moe kernel
as kept in pytorch-labs/applied-ai.

Category: moe. Source: pytorch-labs/applied-ai kernels/triton/inference/col_major_moe_gemm/v0_moe_fused.py
(see SOURCE.md). Row t*top_k + j of h (the gated activations of token t for its j-th expert) is multiplied by
that expert's weight W[e] [H, I] and scaled by the router weight: out[t, j] = w[t, j] * (h[t*top_k+j] @ W[e]^T).
Tokens are sorted by expert and padded to the M block (`moe_align_block_size`) so each block uses one expert.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "moe"
CASES = [
    {"M": 2048, "E": 8, "top_k": 2, "H": 4096, "I": 14336, "dtype": "bfloat16"},
    {"M": 512, "E": 8, "top_k": 2, "H": 4096, "I": 14336, "dtype": "float16"},
    {"M": 4096, "E": 64, "top_k": 6, "H": 2048, "I": 1408, "dtype": "bfloat16"},
    {"M": 16, "E": 8, "top_k": 2, "H": 4096, "I": 14336, "dtype": "float16"},
]
SMOKE_CASES = [{"M": 6, "E": 4, "top_k": 2, "H": 48, "I": 64, "dtype": "float16"},
               {"M": 2, "E": 8, "top_k": 2, "H": 40, "I": 96, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, h: torch.Tensor, w2: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor):
        M, top_k = topk_ids.shape
        out = torch.zeros(M * top_k, w2.shape[1], dtype=torch.float32, device=h.device)
        flat = topk_ids.flatten()
        for e in range(w2.shape[0]):
            rows = flat == e
            out[rows] = h[rows].float() @ w2[e].float().t()
        out = out * topk_weights.flatten().float()[:, None]
        return out.view(M, top_k, -1).to(h.dtype)


def get_inputs(M: int = 64, E: int = 8, top_k: int = 2, H: int = 256, I: int = 512,
               dtype: str = "float16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    h = torch.randn(M * top_k, I, dtype=dt)
    w2 = (torch.randn(E, H, I) / I ** 0.5).to(dt)
    logits = torch.randn(M, E)
    topk_weights, topk_ids = torch.softmax(logits, dim=-1).topk(top_k, dim=-1)
    return [h, w2, topk_weights.float(), topk_ids.to(torch.int32)]


def get_init_inputs(**_) -> list:
    return []


def flops(M: int, top_k: int, H: int, I: int, **_) -> float:
    return 2.0 * M * top_k * H * I


def bytes_moved(M: int, E: int, top_k: int, H: int, I: int, dtype: str = "float16") -> float:
    return (M * top_k * (I + H) + min(E, M * top_k) * H * I) * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
