"""The IR engine against both Triton versions: the main env's (3.9) and the GPU image's (3.6, make triton36-env)."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.ir import analyze, capture_kernel
from optimizer.harness.triton_env import find_triton_python

KERNELS = Path(__file__).parent / "kernels"
ARGS = ["X=*fp32", "Y=*fp32", "n=1000", "BLOCK=1024"]


def test_capture_with_the_triton36_env_records_its_version(tmp_path: Path) -> None:
    import triton

    py = find_triton_python("3.6")
    if py is None:
        pytest.skip("no Triton 3.6 environment: run `make triton36-env` (about 10-70 s) to test the IR engine on 3.6")
    spec = str(KERNELS / "masked_copy.py::masked_copy")
    main = capture_kernel(spec, "cuda:90", ARGS, workdir=tmp_path / "main")
    old = capture_kernel(spec, "cuda:90", ARGS, workdir=tmp_path / "t36", python=py)
    assert main.compiler_version == triton.__version__
    assert old.compiler_version.startswith("3.6")
    for cap in (main, old):
        assert {"ttir", "ttgir", "ptx"} <= set(cap.stages)
        report = analyze(cap)
        assert report.compiler_version == cap.compiler_version  # every result names its Triton
        # the same attribution on both: n=1000 is not divisible by 16, so the masked load stays scalar (line 11)
        assert report.signature("scalar_global_load").source_lines == [11]
        assert "vector_global_load" not in report.names()


def test_ladder_triton_python_setting_selects_the_capture_interpreter(tmp_path: Path, monkeypatch) -> None:
    py = find_triton_python("3.6")
    if py is None:
        pytest.skip("no Triton 3.6 environment: run `make triton36-env` (about 10-70 s) to test the IR engine on 3.6")
    monkeypatch.setenv("LADDER_TRITON_PYTHON", str(py))
    cap = capture_kernel(str(KERNELS / "masked_copy.py::masked_copy"), "cuda:90", ARGS, workdir=tmp_path, per_pass=False)
    assert cap.compiler_version.startswith("3.6")
