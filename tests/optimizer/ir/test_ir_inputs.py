"""Bad capture inputs raise InvalidArgument; a missing Ascend environment says how to create it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.errors import InvalidArgument, ToolchainError
from optimizer.ir import ascend as ascend_mod
from optimizer.ir import capture_kernel, parse_target

KERNELS = Path(__file__).parent / "kernels"


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


def test_an_autotuned_kernel_is_captured_through_its_wrapper():
    """An Autotuner has ``arg_names`` like a JITFunction (Triton 3.6 and 3.9) but no ``params``: the capture unwraps
    to the JITFunction (session 11: every round after an autotune rewrite lost L3 with "'Autotuner' object has no
    attribute 'params'")."""
    from optimizer.ir import analyze

    cap = capture_kernel(f"{KERNELS}/row_sum_autotuned.py::row_sum", "cuda:90", ["X=*fp32", "OUT=*fp32", "stride=1024", "BLOCK=1024"])
    assert cap.kernel == "row_sum" and "ptx" in cap.stages
    assert any(s.name == "cross_warp_reduction" for s in analyze(cap).signatures)
