"""Golden kernel: a masked contiguous load; `n` divisible by 16 or not decides vectorization."""

import triton
import triton.language as tl


@triton.jit
def masked_copy(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask, other=0.0)
    tl.store(Y + offs, x * 2.0, mask=mask)
