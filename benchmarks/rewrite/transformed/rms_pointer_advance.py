"""rows_per_program example: RMS norm with one short row per program that advances its pointers (loop form)."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [2, 4, 8, 16]}}
CONTEXT = {"launches": [{"kernel": "rms_kernel", "grid": [262144], "constexprs": {"BLOCK": 128}}]}
TOL = {"atol": 1e-5, "rtol": 1e-5}


@triton.jit
def rms_kernel(x_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr):
    row_first = tl.program_id(0) * ROWS_PER_PROGRAM
    x_ptr_rpp0 = x_ptr
    y_ptr_rpp0 = y_ptr
    for _rpp in tl.static_range(ROWS_PER_PROGRAM):
        x_ptr = x_ptr_rpp0
        y_ptr = y_ptr_rpp0
        row = row_first + _rpp
        if row < n_rows_rpp:
            x_ptr += row * stride
            y_ptr += row * stride
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for off in range(0, n_cols, BLOCK):
                cols = off + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
                acc += x * x
            rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
            for off in range(0, n_cols, BLOCK):
                cols = off + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)
                tl.store(y_ptr + cols, x * rstd, mask=cols < n_cols)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        ROWS_PER_PROGRAM = 16
        rms_kernel[(triton.cdiv(n_rows, ROWS_PER_PROGRAM),)](x, y, n_cols, x.stride(0), 1e-6, BLOCK=128, n_rows_rpp=n_rows, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(262144, 128, device=device)]


def reference(x):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
