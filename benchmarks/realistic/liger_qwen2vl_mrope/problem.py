"""Qwen2-VL multimodal rotary embedding (M-RoPE) of q and k, Liger-Kernel's kernel.

Category: rotary. Source: linkedin/Liger-Kernel src/liger_kernel/ops/qwen2vl_mrope.py (see SOURCE.md).
cos/sin carry three position streams (temporal, height, width) [3, B, S, D]; the rotary half-dim is split into
mrope_section = (16, 24, 24) and each part takes its stream. The reference is Hugging Face's
`apply_multimodal_rotary_pos_emb`. One program per token rotates all q and kv heads; the launcher makes the
[B, H, S, D] views contiguous in [B, S, H, D] first (a copy) and rotates those copies.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "rotary"
CASES = [
    {"B": 1, "S": 8192, "HQ": 28, "HKV": 4, "D": 128, "dtype": "bfloat16"},
    {"B": 4, "S": 4096, "HQ": 16, "HKV": 2, "D": 128, "dtype": "bfloat16"},
    {"B": 8, "S": 2048, "HQ": 28, "HKV": 4, "D": 128, "dtype": "float16"},
    {"B": 1, "S": 32768, "HQ": 64, "HKV": 8, "D": 128, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"B": 2, "S": 5, "HQ": 4, "HKV": 2, "D": 128, "dtype": "float32"},
               {"B": 1, "S": 3, "HQ": 3, "HKV": 2, "D": 128, "dtype": "float16"}]


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, mrope_section=(16, 24, 24)):
        super().__init__()
        self.mrope_section = list(mrope_section)

    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
        sections = self.mrope_section * 2
        c = torch.cat([m[i % 3] for i, m in enumerate(cos.float().split(sections, dim=-1))], dim=-1).unsqueeze(1)
        s = torch.cat([m[i % 3] for i, m in enumerate(sin.float().split(sections, dim=-1))], dim=-1).unsqueeze(1)
        qf, kf = q.float(), k.float()
        return ((qf * c + _rotate_half(qf) * s).to(q.dtype), (kf * c + _rotate_half(kf) * s).to(k.dtype))


def get_inputs(B: int = 1, S: int = 128, HQ: int = 28, HKV: int = 4, D: int = 128,
               dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    pos = torch.arange(S, dtype=torch.float32)
    pos3 = torch.stack([pos, pos // 4, pos % 7])[:, None, :].expand(3, B, S)
    inv_freq = 1.0 / (1000000 ** (torch.arange(0, D, 2, dtype=torch.float32) / D))
    emb = torch.cat([pos3[..., None] * inv_freq] * 2, dim=-1)
    return [torch.randn(B, HQ, S, D, dtype=dt), torch.randn(B, HKV, S, D, dtype=dt), emb.cos().to(dt), emb.sin().to(dt)]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, S: int, HQ: int, HKV: int, D: int, **_) -> float:
    return 3.0 * B * S * (HQ + HKV) * D


def bytes_moved(B: int, S: int, HQ: int, HKV: int, D: int, dtype: str = "bfloat16") -> float:
    return (4.0 * B * S * (HQ + HKV) * D + 2 * 3 * B * S * D) * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
