"""`ladder ir` (``optimizer.cli.ir``) as the main CLI mounts it."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from kb.errors import Unavailable
from optimizer.cli import ir as ir_cli
from optimizer.cli.ir import ir_command

KERNELS = Path(__file__).parents[1] / "ir" / "kernels"


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
    def no_kb(server, token):  # noqa: ANN001, ANN202 - this test is about the no-KB path
        raise Unavailable("no KB in this test")

    monkeypatch.setattr(ir_cli, "open_kb", no_kb)
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
