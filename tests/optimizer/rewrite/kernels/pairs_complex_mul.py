"""Complex multiply of interleaved (real, imag) pairs, each member read and written by its own stride-2 access."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def cmul_kernel(x_ptr, w_ptr, out_ptr, n_pairs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    d = pid * BLOCK + tl.arange(0, BLOCK)
    mask = d < n_pairs
    xr = tl.load(x_ptr + d * 2, mask=mask, other=0.0)
    scale = 2.0
    xi = tl.load(x_ptr + d * 2 + 1, mask=mask, other=0.0)
    wr = tl.load(w_ptr + 2 * d, mask=mask, other=0.0).to(tl.float32)
    wi = tl.load(w_ptr + 2 * d + 1, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + d * 2, (xr * wr - xi * wi) * scale, mask=mask)
    tl.store(out_ptr + d * 2 + 1, (xr * wi + xi * wr) * scale, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, w):
        out = torch.empty_like(x)
        n_pairs = x.numel() // 2
        cmul_kernel[(triton.cdiv(n_pairs, 64),)](x, w, out, n_pairs, BLOCK=64)
        return out


CASES = [{"N": 300}, {"N": 64}]


def get_inputs(N=300):
    return [torch.randn(N, 2), torch.randn(N, 2)]
