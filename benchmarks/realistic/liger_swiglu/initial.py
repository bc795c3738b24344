"""Liger-Kernel's SwiGLU forward kernel as published, launched the way ``swiglu_forward`` launches it."""

# ruff: noqa  (published code kept as written; see SOURCE.md)

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


def calculate_settings(n):
    MAX_FUSED_SIZE = 65536
    BLOCK_SIZE = triton.next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds the recommended Triton blocksize = {MAX_FUSED_SIZE}."
        )

    num_warps = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def silu(x):
    return x * tl.sigmoid(x)


@triton.jit
def _swiglu_forward_kernel(
    a_ptr, b_ptr, c_ptr, stride, gate_multiplier, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr
):
    program_id = tl.program_id(0).to(tl.int64)

    # locate start index
    a_ptr += program_id * stride
    b_ptr += program_id * stride
    c_ptr += program_id * stride

    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    # sigmoid requires type float32
    a_row = tl.load(a_ptr + col_offsets, mask=mask, other=0).to(tl.float32) * gate_multiplier.to(tl.float32)
    b_row = tl.load(b_ptr + col_offsets, mask=mask, other=0)
    c_row = silu(a_row).cast(b_row.dtype) * b_row
    tl.store(c_ptr + col_offsets, c_row, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        ori_shape = a.shape
        n_cols = ori_shape[-1]
        a = a.contiguous().view(-1, n_cols)
        b = b.contiguous().view(-1, n_cols)
        c = torch.empty_like(a)
        n_rows = a.shape[0]
        BLOCK_SIZE, num_warps = calculate_settings(n_cols)
        _swiglu_forward_kernel[(n_rows,)](
            a, b, c, c.stride(-2), float(1.0), n_cols=n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
        )
        return c.view(*ori_shape)
