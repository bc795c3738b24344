"""Log-probabilities of the sampled token and the top-k tokens of each request (vLLM's GPU model runner).

Category: sampling. Source: vllm-project/vllm vllm/v1/worker/gpu/sample/logprob.py (see SOURCE.md).
One program per request: a max pass and a sum-of-exp pass over the vocabulary (1024 at a time), then a gather
of the k+1 requested logits minus the log-sum-exp. vLLM does not materialize the full log-softmax.
"""

from __future__ import annotations

import torch
from torch import nn

CATEGORY = "sampling"
CASES = [
    {"R": 256, "V": 128256, "K": 21, "dtype": "float32"},
    {"R": 1024, "V": 151936, "K": 6, "dtype": "bfloat16"},
    {"R": 64, "V": 256000, "K": 21, "dtype": "float32"},
    {"R": 512, "V": 32000, "K": 1, "dtype": "float32"},
]
SMOKE_CASES = [{"R": 5, "V": 3000, "K": 6, "dtype": "float32"}, {"R": 3, "V": 1024, "K": 1, "dtype": "float16"}]


class Model(nn.Module):
    def forward(self, logits: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(logits.float(), dim=-1).gather(1, token_ids.long())


def get_inputs(R: int = 8, V: int = 32000, K: int = 6, dtype: str = "float32") -> list[torch.Tensor]:
    logits = (torch.randn(R, V) * 3).to(getattr(torch, dtype))
    sampled = torch.randint(0, V, (R, 1))
    top = torch.topk(logits.float(), K - 1, dim=-1).indices if K > 1 else sampled[:, :0]
    return [logits, torch.cat((sampled, top), dim=1)]


def get_init_inputs(**_) -> list:
    return []


def flops(R: int, V: int, **_) -> float:
    return 4.0 * R * V


def bytes_moved(R: int, V: int, dtype: str = "float32", **_) -> float:
    return 2.0 * R * V * getattr(torch, dtype).itemsize


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
# CPU_VALIDATION = "compile_only"    # the interpreter cannot run it (libdevice, block pointers)
