"""single_pass_fusion example: layer norm forward with a mean pass, a variance pass and a normalize pass."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "single_pass_fusion", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-4, "rtol": 1e-4}


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    y_row = y_ptr + row * stride
    s = tl.zeros([BLOCK], dtype=tl.float32)
    welford_count = tl.zeros([BLOCK], dtype=tl.float32)
    welford_mean = tl.zeros([BLOCK], dtype=tl.float32)
    welford_m2 = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        welford_ok = (cols < N).to(tl.float32)
        welford_count += welford_ok
        welford_delta = v - welford_mean
        welford_mean += welford_ok * welford_delta / tl.maximum(welford_count, 1.0)
        welford_m2 += welford_ok * welford_delta * (v - welford_mean)
    s = welford_count * welford_mean  # per-lane sums: tl.sum gives the row sum
    mu = tl.sum(s, axis=0) / N
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    sq = welford_m2 + welford_count * (welford_mean - mu) * (welford_mean - mu)  # Chan merge
    rstd = 1.0 / tl.sqrt(tl.sum(sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        m = cols < N
        v = tl.load(x_row + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m)
        b = tl.load(b_ptr + cols, mask=m)
        tl.store(y_row + cols, (v - mu) * rstd * w + b, mask=m)


class ModelNew(nn.Module):
    def forward(self, x, w, b):
        n_rows, n = x.shape
        y = torch.empty_like(x)
        layernorm_kernel[(n_rows,)](x, w, b, y, n, x.stride(0), 1e-5, BLOCK=1024, num_warps=8)
        return y


def get_inputs(device="cuda"):
    n = 32768
    return [torch.randn(4096, n, device=device), torch.randn(n, device=device), torch.randn(n, device=device)]


def reference(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[1],), w, b, 1e-5)
