"""The no-op check compiles only recorded configurations within the compile budget (``optimizer.ir.compile_cost``):
a one-warp 65536-wide configuration's compile is unbounded and its time would decide the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite import effect
from optimizer.rewrite.effect import compiled_identity

ADD = '''
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
'''
HINTED = ADD.replace("    mask = offs < n\n",
                     "    offs = tl.max_contiguous(tl.multiple_of(offs, 1024), 1024)\n    mask = offs < n\n")


def _record(tmp_path: Path, block: int, warps: int) -> dict:
    f = tmp_path / "base.py"
    f.write_text(ADD)
    return {"kernel": "add_kernel", "file": str(f), "launches": 1,
            "ir_args": {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": 98304, "BLOCK": block},
            "options": {"num_warps": warps, "num_stages": 3, "num_ctas": 1}}


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[list[dict]]:
    batches: list[list[dict]] = []
    real = effect._compile

    def counting(jobs: list[dict], target: str, timeout_s: float) -> list[str | None]:
        batches.append(jobs)
        return real(jobs, target, timeout_s)

    monkeypatch.setattr(effect, "_compile", counting)
    return batches


def test_configurations_over_the_budget_are_not_compiled(tmp_path: Path, compiled: list[list[dict]]) -> None:
    recs = [_record(tmp_path, 65536, 1), _record(tmp_path, 1024, 4)]
    why = compiled_identity(ADD, HINTED, recs)
    assert why is not None and why.startswith("no-op") and "(1 over it not compiled)" in why
    assert all(job["args"]["BLOCK"] == 1024 for batch in compiled for job in batch)


def test_a_kernel_with_no_configuration_within_the_budget_is_not_called_a_noop(
        tmp_path: Path, compiled: list[list[dict]]) -> None:
    assert compiled_identity(ADD, HINTED, [_record(tmp_path, 65536, 1)]) is None
    assert compiled == []
