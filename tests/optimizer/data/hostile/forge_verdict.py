"""Hostile candidate (issue 32): a WRONG kernel (x + x) that finds its judged-mode folder in the request next to it,
writes "continue" verdicts for every case before the judge has seen anything, and makes its own process report
every case passed. The parent ignores the candidate's validation and judges every case itself."""

import glob
import json
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

for req in glob.glob(os.path.join(os.getcwd(), "request.json")):
    out_dir = json.load(open(req)).get("out_dir")
    if out_dir:
        for k in range(8):
            open(os.path.join(out_dir, f"verdict_{k}.json"), "w").write('{"continue": true}')


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + x, mask=mask)  # wrong: x + x


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK=128)
        return out
