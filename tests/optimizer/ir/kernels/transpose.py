"""Golden kernel: a tile loaded row-major and stored transposed, so a layout conversion survives."""

import triton
import triton.language as tl


@triton.jit
def transpose(X, Y, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(X + rm[:, None] * N + rn[None, :])
    tl.store(Y + rn[None, :] * M + rm[:, None], x)
