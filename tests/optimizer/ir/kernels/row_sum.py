"""Golden kernel: a row sum whose reduced axis spans several warps (shared memory + barriers)."""

import triton
import triton.language as tl


@triton.jit
def row_sum(X, OUT, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + offs)
    tl.store(OUT + row, tl.sum(x, axis=0))
