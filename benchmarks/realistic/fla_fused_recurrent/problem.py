"""Gated linear-attention recurrence (a scan over time), fla's fused_recurrent kernel with a scalar decay per head.

Category: scan. Source: fla-org/flash-linear-attention fla/ops/common/fused_recurrent.py (see SOURCE.md).
q, k [B, T, H, K], v [B, T, H, V], g [B, T, H] (log decay). For t = 1..T: S = exp(g_t) S + k_t v_t^T,
o_t = (scale q_t)^T S with S a K x V state in fp32 per (sequence, head, K block, V block) program; the K blocks'
partial outputs are summed by the launcher. Sequential in T: latency-bound at small B*H.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

CATEGORY = "scan"
CASES = [
    {"B": 8, "T": 2048, "H": 16, "K": 64, "V": 64, "dtype": "bfloat16"},
    {"B": 4, "T": 4096, "H": 8, "K": 128, "V": 128, "dtype": "bfloat16"},
    {"B": 32, "T": 1024, "H": 16, "K": 64, "V": 64, "dtype": "float16"},
    {"B": 2, "T": 8192, "H": 32, "K": 128, "V": 64, "dtype": "float32"},
]
SMOKE_CASES = [{"B": 2, "T": 7, "H": 2, "K": 32, "V": 16, "dtype": "float32"},
               {"B": 1, "T": 5, "H": 3, "K": 128, "V": 96, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        B, T, H, K = q.shape
        qf, kf, vf, gf = q.float() * K ** -0.5, k.float(), v.float(), g.float()
        S = torch.zeros(B, H, K, v.shape[-1], dtype=torch.float32, device=q.device)
        out = []
        for t in range(T):
            S = S * gf[:, t, :, None, None].exp() + kf[:, t, :, :, None] * vf[:, t, :, None, :]
            out.append(torch.einsum("bhk,bhkv->bhv", qf[:, t], S))
        return torch.stack(out, dim=1).to(q.dtype)


def get_inputs(B: int = 2, T: int = 64, H: int = 4, K: int = 64, V: int = 64,
               dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.randn(B, T, H, K, dtype=dt), (torch.randn(B, T, H, K) * 0.1).to(dt), torch.randn(B, T, H, V, dtype=dt),
            F.logsigmoid(torch.randn(B, T, H) + 3).to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, T: int, H: int, K: int, V: int, **_) -> float:
    return 6.0 * B * T * H * K * V


def bytes_moved(B: int, T: int, H: int, K: int, V: int, dtype: str = "float32") -> float:
    return B * T * H * (2 * K + 2 * V + 1) * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
