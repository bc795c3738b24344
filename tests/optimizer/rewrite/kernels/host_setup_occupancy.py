"""Persistent row softmax whose grid is sized by occupancy, the setup (warmup + device query) run on every call."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in range(start, n_rows, step):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


CALLS = []


def _num_programs(y, x, n_rows, n_cols, BLOCK):
    CALLS.append(n_rows)
    if not x.is_cuda:
        return min(n_rows, 4)
    kernel = softmax_kernel.warmup(y, x, n_rows, n_cols, BLOCK=BLOCK, grid=(1,))
    kernel._init_handles()
    props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
    return min(n_rows, props["multiprocessor_count"] * max(1, 65536 // (kernel.n_regs * 32 * 4)))


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        BLOCK = triton.next_power_of_2(n_cols)
        y = torch.empty_like(x)
        n = _num_programs(y, x, n_rows, n_cols, BLOCK)
        softmax_kernel[(n,)](y, x, n_rows, n_cols, BLOCK=BLOCK)
        return y


def get_inputs(M=37, N=100):
    return [torch.randn(M, N)]


CASES = [{"M": 37, "N": 100}, {"M": 5, "N": 33}]
