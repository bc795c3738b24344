"""Per-token log-probabilities of the sampled tokens under temperature 0.9 (the old/reference policy log-probs of
GRPO training), Liger-Kernel's fused selective log-softmax.

Category: loss. Source: linkedin/Liger-Kernel src/liger_kernel/ops/grpo_loss.py (see SOURCE.md).
logits [B, L+1, V]; position l scores token l+1 of input_ids [B, L+1]. One program (one warp, as published) per
token streams its vocabulary row in blocks of 2048 with an online max/sum, then gathers the sampled token's
logit: log p = x / T - logsumexp(row / T). The full log-softmax is never written. Memory-bound: one read.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "loss"
CASES = [
    {"B": 8, "L": 1024, "V": 151936, "dtype": "bfloat16"},
    {"B": 16, "L": 512, "V": 128256, "dtype": "bfloat16"},
    {"B": 4, "L": 2048, "V": 32000, "dtype": "float32"},
    {"B": 32, "L": 256, "V": 151936, "dtype": "float16"},
]
SMOKE_CASES = [{"B": 2, "L": 3, "V": 5000, "dtype": "float32"}, {"B": 1, "L": 4, "V": 1000, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
        L = logits.shape[1] - 1
        logp = torch.log_softmax(logits[:, :-1].float() / 0.9, dim=-1)
        return logp.gather(-1, input_ids[:, -L:].unsqueeze(-1)).squeeze(-1)


def get_inputs(B: int = 2, L: int = 16, V: int = 32000, dtype: str = "float32") -> list[torch.Tensor]:
    return [(torch.randn(B, L + 1, V) * 3).to(getattr(torch, dtype)), torch.randint(0, V, (B, L + 1))]


def get_init_inputs(**_) -> list:
    return []


def flops(B: int, L: int, V: int, **_) -> float:
    return 5.0 * B * L * V


def bytes_moved(B: int, L: int, V: int, dtype: str = "float32") -> float:
    return 1.0 * B * L * V * getattr(torch, dtype).itemsize + 12.0 * B * L


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
