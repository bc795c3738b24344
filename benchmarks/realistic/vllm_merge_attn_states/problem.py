"""Merge two partial attention results by their log-sum-exps (split-KV / prefix caching), vLLM's kernel.

Category: attention. Source: vllm-project/vllm vllm/attention/ops/triton_merge_attn_states.py (SOURCE.md).
out = (exp(lse_p) * o_p + exp(lse_s) * o_s) / (exp(lse_p) + exp(lse_s)) per token and head, and the merged
lse. Both results are written into preallocated buffers, inputs 0 and 5 (INPLACE_OUTPUTS). Memory-bound.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "attention"
INPLACE_OUTPUTS = [0, 5]
CASES = [
    {"T": 16384, "H": 32, "D": 128, "dtype": "bfloat16"},
    {"T": 65536, "H": 8, "D": 128, "dtype": "float16"},
    {"T": 8192, "H": 64, "D": 128, "dtype": "float32"},
    {"T": 32768, "H": 16, "D": 96, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"T": 5, "H": 3, "D": 64, "dtype": "float32"}, {"T": 4, "H": 2, "D": 80, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse):
        p_lse, s_lse = prefix_lse.float().t()[..., None], suffix_lse.float().t()[..., None]  # (T, H, 1)
        m = torch.maximum(p_lse, s_lse)
        p_w, s_w = torch.exp(p_lse - m), torch.exp(s_lse - m)
        out = (prefix_output.float() * p_w + suffix_output.float() * s_w) / (p_w + s_w)
        output.copy_(out)
        output_lse.copy_((torch.log(p_w + s_w) + m)[..., 0].t())
        return output, output_lse


def get_inputs(T: int = 128, H: int = 8, D: int = 128, dtype: str = "float32") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    return [torch.zeros(T, H, D, dtype=dt), torch.randn(T, H, D, dtype=dt), torch.randn(H, T) * 3,
            torch.randn(T, H, D, dtype=dt), torch.randn(H, T) * 3, torch.zeros(H, T)]


def get_init_inputs(**_) -> list:
    return []


def flops(T: int, H: int, D: int, **_) -> float:
    return 3.0 * T * H * D


def bytes_moved(T: int, H: int, D: int, dtype: str = "float32") -> float:
    return 3.0 * T * H * D * getattr(torch, dtype).itemsize + 12.0 * T * H
