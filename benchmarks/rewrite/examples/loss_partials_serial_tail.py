"""block_scale under serial_tail evidence: a Huber-style mean loss whose first kernel writes one partial sum per
512-element block and whose second kernel, launched as one program, walks all the partials."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}, "requires": ["code:tl.arange"]}
CONTEXT = {"evidence": ["code:tl.arange", "cause:serial_tail"]}
TOL = {"atol": 1e-4, "rtol": 1e-4}  # a mean over 2^27 terms summed in different orders


@triton.jit
def huber_partial_kernel(p_ptr, t_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.abs(tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0))
    loss = tl.where(d < 1.0, 0.5 * d * d, d - 0.5)
    tl.store(part_ptr + pid, tl.sum(tl.where(mask, loss, 0.0), axis=0))


@triton.jit
def mean_kernel(part_ptr, out_ptr, n_parts, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_parts, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def forward(self, pred, target):
        n = pred.numel()
        n_parts = triton.cdiv(n, 512)
        parts = torch.empty(n_parts, dtype=torch.float32, device=pred.device)
        out = torch.empty((), dtype=torch.float32, device=pred.device)
        huber_partial_kernel[(n_parts,)](pred, target, parts, n, BLOCK=512)
        mean_kernel[(1,)](parts, out, n_parts, n, BLOCK=1024, num_warps=4)
        return out


def get_inputs(device="cuda", n=1 << 27):
    return [torch.randn(n, device=device), torch.randn(n, device=device)]


def reference(pred, target):
    return torch.nn.functional.smooth_l1_loss(pred, target)
