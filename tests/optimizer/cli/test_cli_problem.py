"""``ladder problem new``: scaffolding a problem folder from a kernel file and a torch reference."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kb.errors import InvalidArgument
from optimizer.onboarding import RULE_HINTS, scaffold
from optimizer.harness.hacks import static_scan
from optimizer.harness.problem import load_candidate, load_problem

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _double(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n) * 2, mask=offs < n)


def double(x, scale):
    y = torch.empty_like(x)
    _double[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
    return y
"""
REFERENCE = """
import torch
from torch import nn


class Doubler(nn.Module):
    def forward(self, x, scale):
        return x * 2


def get_inputs():
    return [torch.randn(300), 1.0]


def get_init_inputs():
    return []
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    k, r = tmp_path / "kern.py", tmp_path / "ref.py"
    k.write_text(textwrap.dedent(KERNEL))
    r.write_text(textwrap.dedent(REFERENCE))
    return k, r


def test_scaffold_writes_a_loadable_problem(files, tmp_path: Path) -> None:
    k, r = files
    out = scaffold(f"{k}::double", f"{r}::Doubler", tmp_path / "doubler")
    problem = load_problem(out["problem"].parent)
    assert problem.module.Model is problem.module.Doubler
    cls = load_candidate(out["initial"])
    import inspect

    assert list(inspect.signature(cls.forward).parameters) == ["self", "x", "scale"]
    assert "Repository: TODO" in out["source"].read_text() and "ModelNew` calling `double`" in out["source"].read_text()
    assert "# INPLACE_OUTPUTS" in out["problem"].read_text()  # the declarations are listed for the user
    assert not [f for f in static_scan(out["initial"].read_text()) if f.severity == "reject"]
    with pytest.raises(InvalidArgument, match="--force"):
        scaffold(f"{k}::double", f"{r}::Doubler", tmp_path / "doubler")


@pytest.mark.parametrize(("kernel", "reference", "message"), [
    ("{k}", "{r}::Doubler", "defines no ModelNew: name the launcher"),
    ("{k}::nope", "{r}::Doubler", "no top-level function 'nope'"),
    ("{k}::double", "{r}", "defines no Model"),
    ("{k}::double", "{r}::Missing", "defines no Missing"),
    ("{k}::double", "{d}/absent.py", "no such file"),
])
def test_scaffold_errors_say_what_to_pass(files, tmp_path: Path, kernel: str, reference: str, message: str) -> None:
    k, r = files
    fmt = {"k": k, "r": r, "d": tmp_path}
    with pytest.raises(InvalidArgument, match=message):
        scaffold(kernel.format(**fmt), reference.format(**fmt), tmp_path / "out")


def test_every_relaxable_rule_names_its_declaration() -> None:
    for kind, decl in (("input_mutation", "INPLACE_OUTPUTS"), ("wrong_dtype", "OUTPUT_DTYPES"), ("mismatch", "INT_ATOL"),
                       ("reference_op_call", "ALLOWED_TORCH_OPS")):
        assert decl in RULE_HINTS[kind][1]


INPLACE_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def _scale_(X, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs, mask=offs < n) * 3, mask=offs < n)


def scale_(x):
    _scale_[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)
    return x
"""
INPLACE_REFERENCE = """
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x.mul_(3)


def get_inputs():
    return [torch.randn(300)]


def get_init_inputs():
    return []
"""


def test_problem_new_reports_the_failed_rule_and_the_declaration_then_check_passes(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from optimizer.cli.app import app

    (tmp_path / "k.py").write_text(textwrap.dedent(INPLACE_KERNEL))
    (tmp_path / "r.py").write_text(textwrap.dedent(INPLACE_REFERENCE))
    out = tmp_path / "scale"
    runner = CliRunner()
    res = runner.invoke(app, ["problem", "new", f"{tmp_path / 'k.py'}::scale_", "--reference", str(tmp_path / "r.py"),
                              "--out", str(out), "--json"])
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    assert [r["kind"] for r in report["failed_rules"]] == ["input_mutation"]
    assert "INPLACE_OUTPUTS" in report["failed_rules"][0]["declare"] and report["triton"]
    with (out / "problem.py").open("a") as f:
        f.write("\nINPLACE_OUTPUTS = [0]\n")
    res = runner.invoke(app, ["problem", "check", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["declared"]["INPLACE_OUTPUTS"] == [0]
