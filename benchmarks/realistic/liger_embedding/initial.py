"""Liger-Kernel's (experimental) embedding forward kernel: 2-D tiles of (tokens x embedding columns)."""

# ruff: noqa  (published code kept as written; see SOURCE.md)

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def embedding_forward_kernel(
    embeddings_ptr,
    indices_ptr,
    output_ptr,
    n_elements,
    embedding_dim: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    start_m = pid_m * BLOCK_SIZE_M
    start_n = pid_n * BLOCK_SIZE_N
    offsets_m = start_m + tl.arange(0, BLOCK_SIZE_M)
    mask_m = offsets_m < n_elements
    indices = tl.load(indices_ptr + offsets_m, mask=mask_m, other=0)
    offsets_n = start_n + tl.arange(0, BLOCK_SIZE_N)
    mask_n = offsets_n < embedding_dim

    embedding_offsets = indices[:, None] * embedding_dim + offsets_n[None, :]
    embeddings = tl.load(
        embeddings_ptr + embedding_offsets,
        mask=mask_m[:, None] & mask_n[None, :],
        other=0.0,
    )

    output_offsets = offsets_m[:, None] * embedding_dim + offsets_n[None, :]
    tl.store(output_ptr + output_offsets, embeddings, mask=mask_m[:, None] & mask_n[None, :])


def embedding_forward(embeddings: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """``LigerEmbeddingFunction.forward`` of liger_kernel/ops/experimental/embedding.py, without autograd."""
    ori_shape = indices.shape
    indices = indices.view(-1)
    output = torch.empty(
        indices.shape[0],
        embeddings.shape[1],
        device=indices.device,
        dtype=embeddings.dtype,
    )

    n_elements = indices.numel()
    embedding_dim = embeddings.shape[1]

    BLOCK_SIZE_M = triton.next_power_of_2(min(128, embedding_dim))
    BLOCK_SIZE_N = triton.next_power_of_2(min(128, embedding_dim))
    grid = (
        triton.cdiv(n_elements, BLOCK_SIZE_M),
        triton.cdiv(embedding_dim, BLOCK_SIZE_N),
    )

    embedding_forward_kernel[grid](
        embeddings,
        indices,
        output,
        n_elements,
        embedding_dim=embedding_dim,
        BLOCK_SIZE_M=BLOCK_SIZE_M,
        BLOCK_SIZE_N=BLOCK_SIZE_N,
    )

    return output.view(*ori_shape, -1)


class ModelNew(nn.Module):
    def __init__(self, V: int = 1024, D: int = 256, dtype: str = "float32"):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(V, D).to(getattr(torch, dtype)))

    def forward(self, indices: torch.Tensor) -> torch.Tensor:
        return embedding_forward(self.weight.contiguous(), indices.contiguous())
