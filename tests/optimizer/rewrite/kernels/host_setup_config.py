"""Row sums whose launch config (block, warps, programs) a helper derives from the device on every call."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))


CALLS = []


def _launch_config(x, n_rows):
    CALLS.append(x.shape)
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count if x.is_cuda else 3
    block = min(1024, triton.next_power_of_2(x.shape[1]))
    return block, 4 if block >= 512 else 2, min(n_rows, 2 * sms)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        out = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        BLOCK, warps, programs = _launch_config(x, n_rows)
        row_sum_kernel[(programs,)](x, out, n_rows, n_cols, x.stride(0), BLOCK=BLOCK, num_warps=warps)
        return out


def get_inputs(M=19, N=300):
    return [torch.randn(M, N)]


CASES = [{"M": 19, "N": 300}, {"M": 4, "N": 2000}]
