"""A naive matrix-vector product: one program per output element, a scalar accumulator over a K loop, a guard."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am):
    i = tl.program_id(axis=0)
    if i < M:
        acc = 0.0
        for k in range(K):
            acc += tl.load(a_ptr + i * stride_am + k) * tl.load(x_ptr + k)
        tl.store(y_ptr + i, acc)


class ModelNew(nn.Module):
    def forward(self, a, x):
        M, K = a.shape
        y = torch.empty(M, dtype=torch.float32)
        matvec_kernel[(M,)](a, x, y, M, K, a.stride(0))
        return y


CASES = [{"m": 67, "k": 9}, {"m": 5, "k": 3}]


def get_inputs(m=67, k=9):
    return [torch.randn(m, k), torch.randn(k)]
