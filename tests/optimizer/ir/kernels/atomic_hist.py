"""Golden kernel: accumulation with the default (acq_rel) tl.atomic_add, whose lowering brackets it with barriers."""

import triton
import triton.language as tl


@triton.jit
def atomic_hist(X, OUT, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.atomic_add(OUT + offs % 16, x)
