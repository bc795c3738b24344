"""The row-sum golden kernel behind @triton.autotune (the form an autotune rewrite leaves)."""

import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["stride"])
@triton.jit
def row_sum(X, OUT, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + offs)
    tl.store(OUT + row, tl.sum(x, axis=0))
