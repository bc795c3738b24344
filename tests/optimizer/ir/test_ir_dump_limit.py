"""A per-pass dump over the file-size limit stops the worker and the capture falls back to stages alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.ir import capture

KERNELS = Path(__file__).parent / "kernels"
SPEC = str(KERNELS / "dot_f32.py") + "::dot_f32"
ARGS = ["A=*fp32", "B=*fp32", "C=*fp32", "K=256", "stride_am=64", "stride_bk=32", "stride_cm=32",
        "BLOCK_M=64", "BLOCK_N=32", "BLOCK_K=16", "PRECISION=tf32"]


def test_oversized_dump_is_dropped_and_the_stages_still_captured(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    full = capture.capture_kernel(SPEC, "cuda:90", ARGS, options={"num_warps": 4}, workdir=tmp_path / "full")
    dump = (tmp_path / "full" / "passes.mlir").stat().st_size
    assert full.snapshots and dump > 1024 * 1024, f"the dot kernel's dump ({dump} B) must exceed the 1 MB test limit"
    monkeypatch.setattr(capture, "DUMP_LIMIT_MB", 1)
    small = capture.capture_kernel(SPEC, "cuda:90", ARGS, options={"num_warps": 4}, workdir=tmp_path / "capped")
    assert not small.snapshots and any("dropped" in w for w in small.warnings)  # the snapshots were dropped ...
    assert "ptx" in small.stages and small.stages["ptx"] == full.stages["ptx"]  # ... the compile was not


def test_without_per_pass_the_limit_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture, "DUMP_LIMIT_MB", 1)
    (tmp_path / "w").mkdir()
    big = tmp_path / "w" / "passes.mlir"
    big.write_bytes(b"x" * (1024 * 1024))
    assert capture._over_limit(tmp_path / "w")
    assert issubclass(capture.DumpTooLarge, capture.ToolchainError)
