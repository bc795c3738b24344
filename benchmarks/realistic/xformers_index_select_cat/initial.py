"""xFormers' index_select_cat forward: gather rows of each source by an index, concatenated flat."""

# ruff: noqa  (published code kept as written; see SOURCE.md)

from __future__ import annotations

from typing import Optional

import torch
import torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def index_select_cat_fwd_kernel(
    output_ptr,  # *Pointer* to output tensor.
    source_ptr,  # *Pointer* to source tensor.
    index_ptr,  # *Pointer* to index tensor.
    num_indices,
    num_cols,
    stride0,  # Stride information of source tensor.
    stride1,
    BLOCK_SIZE_INDEX: tl.constexpr,  # Number of indices each program should process.
    BLOCK_SIZE_COL: tl.constexpr,  # Number of cols each program should process.
):
    pid0 = tl.program_id(axis=0)  # We use 2D launch grid
    pid1 = tl.program_id(axis=1)

    indices = pid0 * BLOCK_SIZE_INDEX + tl.arange(0, BLOCK_SIZE_INDEX)
    rows = tl.load(index_ptr + indices, mask=(indices < num_indices))
    cols = pid1 * BLOCK_SIZE_COL + tl.arange(0, BLOCK_SIZE_COL)

    source_offsets = source_ptr + rows[:, None] * stride0 + cols[None, :] * stride1
    mask = (indices[:, None] < num_indices) & (cols[None, :] < num_cols)
    output = tl.load(source_offsets, mask=mask)

    output_offsets = output_ptr + indices[:, None] * stride0 + cols[None, :] * stride1
    tl.store(output_offsets, output, mask=mask)


def index_select_cat_fwd(
    output: torch.Tensor,
    source: torch.Tensor,
    index: torch.Tensor,
):
    if not source.ndim == 2:
        raise ValueError(f"Expected 2-dimensional tensor, got {source.ndim}.")
    if not index.ndim == 1:
        raise ValueError(f"Expected 1-dimensional tensor, got {index.ndim}.")

    num_rows, num_cols = source.shape
    num_indices = index.shape[0]

    if not num_indices < num_rows:
        raise ValueError(
            "The number of indices cannot exceed the number of rows in the source matrix."
        )

    stride0, stride1 = source.stride(0), source.stride(1)

    def grid(meta):
        return (
            triton.cdiv(num_indices, meta["BLOCK_SIZE_INDEX"]),
            triton.cdiv(num_cols, meta["BLOCK_SIZE_COL"]),
        )

    index_select_cat_fwd_kernel[grid](
        output,
        source,
        index,
        num_indices,
        num_cols,
        stride0,
        stride1,
        BLOCK_SIZE_INDEX=1,
        BLOCK_SIZE_COL=512,
    )

    return output


def index_select_cat(sources, indices):
    """``_IndexSelectCat.forward`` of xformers/ops/indexing.py, without the autograd context."""
    output_numel = 0
    for source, index in zip(sources, indices):
        num_rows, num_cols = source.shape
        num_indices = index.shape[0]
        output_numel += num_indices * num_cols

    output = torch.empty(
        [output_numel], dtype=sources[0].dtype, device=sources[0].device
    )

    processed_numel = 0
    for source, index in zip(sources, indices):
        num_indices = index.shape[0]
        num_cols = source.shape[1]

        index_select_cat_fwd(
            output[
                processed_numel : processed_numel + num_indices * num_cols
            ].view([num_indices, num_cols]),
            source,
            index,
        )

        processed_numel += num_indices * num_cols
    return output


class ModelNew(nn.Module):
    def forward(self, src_a: torch.Tensor, src_b: torch.Tensor, idx_a: torch.Tensor, idx_b: torch.Tensor):
        return index_select_cat([src_a, src_b], [idx_a, idx_b])
