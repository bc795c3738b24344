"""``ladder problem new`` as a new user found it (issue 29 item 7, issue 32): launchers as real code writes them,
ModelNew with the reference's forward arguments, every failed rule at once, the precision scan on the forward path
only, and the reference in its own sandboxed process with a deadline."""

from __future__ import annotations

import inspect
import json
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kb.errors import InvalidArgument
from optimizer.cli.app import app
from optimizer.harness.problem import load_candidate
from optimizer.onboarding import check_problem, scaffold

KERNELS = '''
import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(X, W, Y, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(Y + offs, tl.load(X + offs, mask=m) * tl.load(W + offs, mask=m) + eps, mask=m)


@triton.jit
def _scale_backward_kernel(G, W, DX, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    g = tl.load(G + offs, mask=m).to(tl.float16)  # half precision in the backward only
    tl.store(DX + offs, (g * tl.load(W + offs, mask=m).to(tl.float16)).to(tl.float32), mask=m)


def scale(x, w, eps=0.0, BLOCK=128, num_warps=4, out=None, *, stream=None):
    y = torch.empty_like(x) if out is None else out
    _scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, w, y, x.numel(), eps, BLOCK=BLOCK, num_warps=num_warps)
    return y


class ScaleFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return scale(x, w)

    @staticmethod
    def backward(ctx, g):
        (w,) = ctx.saved_tensors
        dx = torch.empty_like(g)
        _scale_backward_kernel[(triton.cdiv(g.numel(), 128),)](g, w, dx, g.numel(), BLOCK=128)
        return dx, None


class Ops:
    def __init__(self, *args, **kwargs):
        self.block = 128

    def run(self, x, w):
        return scale(x, w, BLOCK=self.block)

    @staticmethod
    def run_static(x, w):
        return scale(x, w)


scale_partial = functools.partial(scale, eps=0.0, BLOCK=64)
scale_apply = ScaleFunction.apply
'''
REFERENCE = '''
import torch
from torch import nn


class Scale(nn.Module):
    def forward(self, x, w):
        return x * w


def get_inputs():
    return [torch.randn(300), torch.randn(300)]


def get_init_inputs():
    return []
'''


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "kern.py").write_text(textwrap.dedent(KERNELS))
    (tmp_path / "ref.py").write_text(textwrap.dedent(REFERENCE))
    return tmp_path / "kern.py", tmp_path / "ref.py"


@pytest.mark.parametrize("launcher", ["scale", "ScaleFunction.apply", "scale_apply", "scale_partial", "Ops.run",
                                      "Ops.run_static"])
def test_model_new_takes_the_reference_forward_arguments_for_every_launcher_form(files, tmp_path: Path, monkeypatch,
                                                                                 launcher: str) -> None:
    """Before: `scale` made forward(self, x, w, eps, BLOCK, num_warps, out) ("missing 4 required positional
    arguments" on validation); `ScaleFunction.apply`, `Ops.run` and partials were refused."""
    import torch

    k, r = files
    out = scaffold(f"{k}::{launcher}", f"{r}::Scale", tmp_path / launcher.replace(".", "_"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # the generated ModelNew runs: the launcher gets what it needs
    cls = load_candidate(out["initial"])
    assert list(inspect.signature(cls.forward).parameters) == ["self", "x", "w"]
    x, w = torch.randn(8), torch.randn(8)
    assert torch.allclose(cls()(x, w), x * w)


def test_problem_new_passes_with_a_function_apply_launcher_and_a_half_precision_backward(files, tmp_path: Path) -> None:
    """Before: the fp16 cast in the backward kernel tripped the precision scan of an fp32 problem."""
    k, r = files
    res = CliRunner().invoke(app, ["problem", "new", f"{k}::ScaleFunction.apply", "--reference", f"{r}::Scale",
                                   "--out", str(tmp_path / "apply"), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["passed"] and report["failed_rules"] == [] and report["fp32_reference"]


BAD_KERNEL = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _double_(X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)


def double(x):
    x16 = x.half()  # a downcast on the forward path of an fp32 problem
    _double_[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)  # and writes into its input
    return x.clone() + 0 * x16.float()
'''
DOUBLE_REF = '''
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(300)]


def get_init_inputs():
    return []
'''


def test_every_failed_rule_is_reported_at_once_with_its_fix(tmp_path: Path) -> None:
    """Before: the static precision rule stopped the check; the input mutation was reported only after fixing it."""
    (tmp_path / "k.py").write_text(textwrap.dedent(BAD_KERNEL))
    (tmp_path / "r.py").write_text(textwrap.dedent(DOUBLE_REF))
    res = CliRunner().invoke(app, ["problem", "new", f"{tmp_path / 'k.py'}::double", "--reference",
                                   str(tmp_path / "r.py"), "--out", str(tmp_path / "p"), "--json"])
    assert res.exit_code == 1, res.output
    rules = {r["kind"]: r for r in json.loads(res.stdout)["failed_rules"]}
    assert {"precision_downgrade", "input_mutation"} <= set(rules), rules
    assert "INPLACE_OUTPUTS" in rules["input_mutation"]["declare"]
    assert all(r["declare"] or r["fix"] for r in rules.values())
    text = CliRunner().invoke(app, ["problem", "check", str(tmp_path / "p")]).output
    assert "rule failed: precision_downgrade" in text and "rule failed: input_mutation" in text


def test_a_reference_that_hangs_at_import_is_bounded(tmp_path: Path) -> None:
    """Before: the reference ran inside the `ladder` process, and a sleep at import hung the command."""
    (tmp_path / "problem.py").write_text("import time\ntime.sleep(600)\n" + textwrap.dedent(DOUBLE_REF))
    (tmp_path / "initial.py").write_text("raise SystemExit('never imported')\n")
    t0 = time.monotonic()
    with pytest.raises(InvalidArgument, match="could not be loaded.*timeout"):
        check_problem(tmp_path, timeout_s=5)
    assert time.monotonic() - t0 < 60
