"""GEGLU forward (tanh-approximated GELU of the gate times the up projection), as Liger-Kernel's
LigerGELUMulFunction computes it; the reference is the torch expression its tests compare against."""
import torch
import torch.nn.functional as F
from torch import nn


class GEGLU(nn.Module):
    def forward(self, a, b):
        return F.gelu(a, approximate="tanh") * b


def get_inputs(rows=4096, cols=4096):
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs(**_):
    return []


CATEGORY = "activation"
CASES = [{"rows": 4096, "cols": 4096}, {"rows": 8192, "cols": 11008}, {"rows": 2048, "cols": 14336}]
SMOKE_CASES = [{"rows": 4, "cols": 96}, {"rows": 3, "cols": 200}]


def bytes_moved(rows=4096, cols=4096):
    return 3 * rows * cols * 4  # read a and b, write c (fp32)


def flops(rows=4096, cols=4096):
    return 10 * rows * cols


Model = GEGLU  # the problem format's name for the reference


# ---- onboarding declarations (README "Onboarding a kernel"); uncomment what this kernel needs ----
# SMOKE_CASES = [{}]                 # small cases the CPU interpreter runs
# INPLACE_OUTPUTS = [0]              # inputs the reference mutates in place (its result)
# INT_ATOL = 1                       # integer outputs may differ by this much (rounding)
# ALLOWED_TORCH_OPS = ["sum"]        # torch epilogue ops after the kernel, beyond the default allow-list
# OUTPUT_DTYPES = {0: "float32"}     # output 0 may have this dtype instead of the reference's
CPU_VALIDATION = "compile_only"  # libdevice tanh: the CPU interpreter cannot run it (detected; declared to skip the attempt)
