"""`ladder ir` as the main CLI mounts it, plus the Ascend environment hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kb.errors import InvalidArgument, ToolchainError
from optimizer.ir import ascend as ascend_mod
from optimizer.ir import capture_kernel, parse_target
from optimizer.ir.cli import ir_command

KERNELS = Path(__file__).parent / "kernels"


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("ir")(ir_command)
    app.command("other")(lambda: None)  # keep "ir" a subcommand, as in the real app
    return app


def test_ir_json_output_carries_report():
    res = CliRunner().invoke(_app(), ["ir", f"{KERNELS}/masked_copy.py::masked_copy", "--target", "cuda:90",
                                      "-a", "X=*fp32", "-a", "Y=*fp32", "-a", "n=1000", "-a", "BLOCK=1024",
                                      "--num-warps", "4", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    names = {s["name"] for s in data["signatures"]}
    assert {"scalar_global_load", "masked_load_not_vectorized"} <= names
    assert data["options"]["num_warps"] == 4 and data["passes_total"] > 20
    assert any(c["pass_name"] == "TritonGPUCoalesce" for c in data["pass_changes"])


def test_ir_human_output_and_explain_without_kb(tmp_path, monkeypatch):
    import optimizer.ir.cli as ir_cli

    # the main CLI installs a KB factory when imported (by other tests); this test is about the no-KB path
    monkeypatch.setattr(ir_cli, "_KB_FACTORY", None)
    res = CliRunner().invoke(_app(), ["ir", f"{KERNELS}/row_sum.py::row_sum", "-a", "X=*fp32", "-a", "OUT=*fp32",
                                      "-a", "stride=1024", "-a", "BLOCK=1024", "--explain", "--out", str(tmp_path)],
                             env={"COLUMNS": "160"})
    assert res.exit_code == 0, res.output
    for text in ("Stages", "Pass changes", "cross_warp_reduction", "ConvertTritonToTritonGPU", "L4", "compiler.py"):
        assert text in res.output
    assert (tmp_path / "passes.mlir").exists() and (tmp_path / "stages" / "row_sum.ptx").exists()


def test_ir_errors_are_one_line_with_exit_2():
    res = CliRunner().invoke(_app(), ["ir", f"{KERNELS}/row_sum.py::row_sum", "-a", "X=*fp32"])
    assert res.exit_code == 2 and "missing --arg for parameter 'OUT'" in res.output
    res = CliRunner().invoke(_app(), ["ir", "nope.py::k"])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_bad_inputs_raise_invalid_argument():
    with pytest.raises(InvalidArgument, match="FILE::KERNEL"):
        capture_kernel("no-separator", "cuda:90")
    with pytest.raises(InvalidArgument, match="unknown target"):
        parse_target("tpu:1")
    with pytest.raises(InvalidArgument, match="no kernel named"):
        capture_kernel(f"{KERNELS}/row_sum.py::nope", "cuda:90", [])
    assert parse_target("cuda:sm_80").arch == 80 and parse_target("ascend").arch == "Ascend910B3"


def test_missing_ascend_env_says_how_to_create_it(monkeypatch, tmp_path):
    monkeypatch.delenv("LADDER_ASCEND_PYTHON", raising=False)
    monkeypatch.setattr(ascend_mod, "REPO_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ToolchainError, match="make ascend-env"):
        capture_kernel(f"{KERNELS}/gather.py::gather", "ascend", ["X=*fp32", "IDX=*i32", "Y=*fp32", "BLOCK=256"])
    monkeypatch.setenv("LADDER_ASCEND_PYTHON", str(tmp_path / "missing" / "python"))
    with pytest.raises(ToolchainError, match="does not exist"):
        ascend_mod.ascend_python()
