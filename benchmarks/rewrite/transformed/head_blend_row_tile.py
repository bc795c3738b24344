"""rows_per_program on a 2-D grid: one program per (token, head) merges two partial attention outputs by their
log-sum-exps; the kernel reads the grid's extents back through tl.num_programs."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [2, 4, 8, 16, 32]}}
CONTEXT = {}
TOL = {"atol": 1e-2, "rtol": 1e-2}  # bf16 outputs


@triton.jit
def merge_kernel(out_ptr, a_ptr, a_lse_ptr, b_ptr, b_lse_ptr, HEAD: tl.constexpr, PADDED: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr):
    tok = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]
    row_tile_ok = tok < n_rows_rpp
    n_tok = n_rows_rpp
    head = tl.program_id(1)
    n_head = tl.num_programs(1)
    la = tl.load(a_lse_ptr + head * n_tok + tok, mask=row_tile_ok)
    lb = tl.load(b_lse_ptr + head * n_tok + tok, mask=row_tile_ok)
    m = tl.maximum(la, lb)
    wa = tl.exp(la - m)
    wb = tl.exp(lb - m)
    d = tl.arange(0, PADDED)[None, :]
    mask = d < HEAD
    base = tok * n_head * HEAD + head * HEAD + d
    a = tl.load(a_ptr + base, mask=(mask) & row_tile_ok).to(tl.float32)
    b = tl.load(b_ptr + base, mask=(mask) & row_tile_ok).to(tl.float32)
    tl.store(out_ptr + base, ((a * wa + b * wb) / (wa + wb)).to(out_ptr.dtype.element_ty), mask=(mask) & row_tile_ok)


class ModelNew(nn.Module):
    def forward(self, a, a_lse, b, b_lse):
        T, H, D = a.shape
        out = torch.empty_like(a)
        ROWS_PER_PROGRAM = 32
        merge_kernel[(triton.cdiv(T, ROWS_PER_PROGRAM), H)](out, a, a_lse, b, b_lse, D, triton.next_power_of_2(D), n_rows_rpp=T, ROWS_PER_PROGRAM=ROWS_PER_PROGRAM)
        return out


def get_inputs(device="cuda", T=32768, H=32, D=128):
    return [torch.randn(T, H, D, device=device, dtype=torch.bfloat16), torch.randn(H, T, device=device),
            torch.randn(T, H, D, device=device, dtype=torch.bfloat16), torch.randn(H, T, device=device)]


def reference(a, a_lse, b, b_lse):
    wa = torch.sigmoid(a_lse - b_lse).transpose(0, 1).unsqueeze(-1)
    return (a.float() * wa + b.float() * (1 - wa)).to(a.dtype)
