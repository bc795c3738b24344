"""Golden kernel: an indirect load (gather) through a loaded index vector."""

import triton
import triton.language as tl


@triton.jit
def gather(X, IDX, Y, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    idx = tl.load(IDX + offs)
    tl.store(Y + offs, tl.load(X + idx))
