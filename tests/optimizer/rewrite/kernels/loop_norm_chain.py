"""Row L2 normalisation of a [B, M, N] batch, batch entry by batch entry: two kernels per entry pass the row norms
through a scratch buffer allocated once, outside the loop (`torch.zeros`), and the loop body binds an alias."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def sq_norm_kernel(x_ptr, nrm_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    acc = 0.0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + i * N + cols, mask=cols < N, other=0.0)
        acc += tl.sum(v * v, axis=0)
    tl.store(nrm_ptr + i, tl.sqrt(acc) + 1e-6)


@triton.jit
def scale_rows_kernel(x_ptr, nrm_ptr, y_ptr, N, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    inv = 1.0 / tl.load(nrm_ptr + i)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        tl.store(y_ptr + i * N + cols, tl.load(x_ptr + i * N + cols, mask=mask, other=0.0) * inv, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        B, M, N = x.shape
        y = torch.empty_like(x)
        nrm = torch.zeros(M, dtype=torch.float32, device=x.device)
        for e in range(B):
            xe = x[e]
            sq_norm_kernel[(M,)](xe, nrm, N, BLOCK=32)
            scale_rows_kernel[(M,)](xe, nrm, y[e], N, BLOCK=32)
        return y


CASES = [{"b": 3, "m": 4, "n": 50}, {"b": 1, "m": 2, "n": 32}]


def get_inputs(b=3, m=4, n=50):
    return [torch.randn(b, m, n)]
