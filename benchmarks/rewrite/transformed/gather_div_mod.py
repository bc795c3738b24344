"""block_per_program example: a row gather with one program per element that splits the index with // and %."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "block_per_program", "params": {}}
CONTEXT = {"launches": [{"kernel": "gather_rows_kernel", "ir_args": {"n_cols": 1024}}]}
TOL = {"atol": 0.0, "rtol": 0.0}


@triton.jit
def gather_rows_kernel(x_ptr, idx_ptr, out_ptr, n_cols, stride_x, n_elems_bpp, BLOCK_SIZE: tl.constexpr):
    row_bpp = tl.program_id(0)
    col_bpp = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    pid = row_bpp * n_cols + col_bpp
    block_ok = (col_bpp < n_cols) & (pid < n_elems_bpp)
    row = row_bpp
    col = col_bpp
    src = tl.load(idx_ptr + row)
    val = tl.load(x_ptr + src * stride_x + col, mask=block_ok)
    tl.store(out_ptr + pid, val, mask=block_ok)


class ModelNew(nn.Module):
    def forward(self, x, idx):
        n_rows, n_cols = idx.shape[0], x.shape[1]
        out = torch.empty((n_rows, n_cols), dtype=x.dtype, device=x.device)
        block_bpp = min(1024, triton.next_power_of_2(n_cols))
        grid = (triton.cdiv(n_rows * n_cols, n_cols), triton.cdiv(n_cols, block_bpp))
        gather_rows_kernel[grid](x, idx, out, n_cols, x.stride(0), n_elems_bpp=n_rows * n_cols, BLOCK_SIZE=block_bpp, num_warps=max(1, min(8, block_bpp // 128)))
        return out


def get_inputs(device="cuda"):
    x = torch.randn(32768, 1024, device=device)
    return [x, torch.randint(0, 32768, (16384,), device=device)]


def reference(x, idx):
    return x[idx]
