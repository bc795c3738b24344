"""Attention forward in Triton, flash style: each program owns BLOCK_M queries of one (batch, head), streams
the keys and values in BLOCK_N = 64 blocks with 8 warps, so the running output, the score tile and q fit
in registers (online softmax)."""

from __future__ import annotations

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, qk_scale,
                     HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    base = tl.program_id(1).to(tl.int64) * S * HEAD_DIM
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, S, BLOCK_N):
        n = start_n + offs_n
        k = tl.load(k_ptr + base + n[None, :] * HEAD_DIM + offs_d[:, None], mask=n[None, :] < S, other=0.0)
        qk = tl.where(n[None, :] < S, tl.dot(q, k) * qk_scale, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp2(qk - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + base + n[:, None] * HEAD_DIM + offs_d[None, :], mask=n[:, None] < S, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        BLOCK_M, BLOCK_N = 128, 64
        qk_scale = D**-0.5 * 1.4426950408889634  # softmax in base 2
        attention_kernel[(triton.cdiv(S, BLOCK_M), B * H)](q, k, v, o, S, qk_scale, HEAD_DIM=D,
                                                            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=2)
        return o
