"""A launcher that asks the device before launching (``torch.cuda.get_device_capability()``, the SM count) still
reaches its launches on a CPU machine: the static paths answer with the analysis target (sm_90, H200 figures)."""

from __future__ import annotations

from pathlib import Path

import torch

from optimizer.harness.evaluation import evaluate, record_launches
from optimizer.harness.problem import load_problem
from optimizer.settings import LadderSettings

PROBLEM = '''
import torch
import torch.nn as nn

CASES = [{"N": 1 << 20}]
SMOKE_CASES = [{"N": 3000}]


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs(N=4096):
    return [torch.randn(N)]


def get_init_inputs(**case):
    return []
'''

CANDIDATE = '''
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        if torch.cuda.get_device_capability()[0] < 8:
            raise RuntimeError("needs sm_80 or newer")
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        y = torch.empty_like(x)
        block = 1024 if x.numel() > 8 * sms * 1024 else 256
        double_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block)
        return y
'''


def _problem(tmp_path: Path) -> Path:
    (tmp_path / "problem.py").write_text(PROBLEM)
    (tmp_path / "initial.py").write_text(CANDIDATE)
    return tmp_path


def test_dry_record_and_interpreter_see_the_target_device(tmp_path: Path) -> None:
    folder = _problem(tmp_path)
    prob = load_problem(folder)
    launches, note, _case = record_launches(prob, folder / "initial.py", LadderSettings())
    assert not note and [r["kernel"] for r in launches] == ["double_kernel"]
    assert launches[0]["constexprs"]["BLOCK"] == 256  # 2^20 elements < 8 x 132 SMs x 1024: the SM count was read
    ev = evaluate(prob, folder / "initial.py", backend="interpreter", settings=LadderSettings(validation_seeds=[0]),
                  timing=False)
    assert ev.passed, ev.reason
    assert not torch.cuda.is_available()  # this process is untouched: the stand-in lives in the worker only
