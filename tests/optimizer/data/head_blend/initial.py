"""One program per (token, head): the grid's extents come back through tl.num_programs, the gate output is
written only when a constexpr flag asks for it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def head_blend_kernel(a_ptr, b_ptr, gate_ptr, out_ptr, gate_out_ptr, HEAD: tl.constexpr, PADDED: tl.constexpr,
                      WRITE_GATE: tl.constexpr):
    tok = tl.program_id(0)
    n_tok = tl.num_programs(0)
    head = tl.program_id(1)
    n_head = tl.num_programs(1)
    g = tl.sigmoid(tl.load(gate_ptr + head * n_tok + tok).to(tl.float32))
    if WRITE_GATE:
        tl.store(gate_out_ptr + head * n_tok + tok, g)
    d = tl.arange(0, PADDED)
    m = d < HEAD
    base = tok * n_head * HEAD + head * HEAD + d
    a = tl.load(a_ptr + base, mask=m)
    b = tl.load(b_ptr + base, mask=m)
    tl.store(out_ptr + base, a * g + b * (1.0 - g), mask=m)


class ModelNew(nn.Module):
    def forward(self, a, b, gate):
        T, H, D = a.shape
        out = torch.empty_like(a)
        gate_out = torch.empty_like(gate)
        head_blend_kernel[(T, H)](a, b, gate, out, gate_out, D, triton.next_power_of_2(D), True)
        return out, gate_out
