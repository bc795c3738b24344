"""Write new tokens' keys and values into a paged KV cache (vLLM's Triton reshape_and_cache_flash), in place.

Category: gather. Source: vllm-project/vllm vllm/attention/ops/triton_reshape_and_cache_flash.py (see SOURCE.md).
Token t goes to slot slot_mapping[t] = block * block_size + offset of the [num_blocks, block_size, H, D] caches;
slot -1 marks a padding token that is skipped. A scatter: one read and one write per element, no math.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "gather"
INPLACE_OUTPUTS = [2, 3]
CASES = [
    {"T": 8192, "H": 8, "D": 128, "blocks": 4096, "block_size": 16, "dtype": "bfloat16"},
    {"T": 256, "H": 8, "D": 128, "blocks": 8192, "block_size": 16, "dtype": "bfloat16"},
    {"T": 16384, "H": 32, "D": 128, "blocks": 2048, "block_size": 32, "dtype": "float16"},
    {"T": 4096, "H": 4, "D": 64, "blocks": 1024, "block_size": 16, "dtype": "bfloat16"},
]
SMOKE_CASES = [{"T": 7, "H": 2, "D": 64, "blocks": 5, "block_size": 4, "dtype": "float32"},
               {"T": 5, "H": 3, "D": 48, "blocks": 4, "block_size": 2, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, key, value, key_cache, value_cache, slot_mapping, k_scale, v_scale) -> None:
        keep = slot_mapping >= 0
        slots = slot_mapping[keep].long()
        key_cache.view(-1, *key_cache.shape[2:])[slots] = key[keep]
        value_cache.view(-1, *value_cache.shape[2:])[slots] = value[keep]


def get_inputs(T: int = 16, H: int = 8, D: int = 128, blocks: int = 64, block_size: int = 16,
               dtype: str = "bfloat16") -> list[torch.Tensor]:
    dt = getattr(torch, dtype)
    slot_mapping = torch.randperm(blocks * block_size)[:T]
    slot_mapping[::7] = -1  # padding tokens
    return [torch.randn(T, H, D, dtype=dt), torch.randn(T, H, D, dtype=dt),
            torch.zeros(blocks, block_size, H, D, dtype=dt), torch.zeros(blocks, block_size, H, D, dtype=dt),
            slot_mapping, torch.ones(1), torch.ones(1)]


def get_init_inputs(**_) -> list:
    return []


def flops(T: int, H: int, D: int, **_) -> float:
    return 1.0 * T * H * D


def bytes_moved(T: int, H: int, D: int, dtype: str = "bfloat16", **_) -> float:
    return 4.0 * T * H * D * getattr(torch, dtype).itemsize + 8.0 * T


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
