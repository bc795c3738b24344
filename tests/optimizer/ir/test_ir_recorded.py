"""Captures recorded on a lent H200 (Triton 3.6.0, torch 2.11, real JIT launch) and replayed here.

They pin the parsing of another Triton version's dumps (3.6 headers, PTX ``.loc`` chains kept only in comments)
and the JIT-parity claim: the TTIR of a real launch carries exactly the divisibility our reproduction predicts.
Recorded with ``python3 tests/optimizer/ir/device_check.py $OUT`` on the device (see that file).
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from optimizer.ir import FRONTEND, analyze
from optimizer.ir.capture import load_capture

DATA = Path(__file__).parent / "data"


def _load(name: str, tmp_path: Path):
    with tarfile.open(DATA / f"h200_triton36_{name}.tgz") as tar:
        tar.extractall(tmp_path, filter="data")
    return load_capture(tmp_path / name)


def test_real_launch_on_h200_replays(tmp_path):
    cap = _load("launch_top2", tmp_path)
    assert cap.compiler_version == "3.6.0" and cap.launched and cap.device == "NVIDIA H200"
    assert "cuda function attributes" in cap.resources.source and cap.resources.registers > 0
    assert not any("specializes differently" in w for w in cap.warnings)  # JIT == reproduction
    assert {a.name: a.divisibility for a in cap.args} == {"X": 16, "OUT": 16, "n_cols": None, "stride": 16,
                                                          "BLOCK": None}
    report = analyze(cap)
    assert report.signature("multi_operand_reduction").pass_introduced == FRONTEND
    shfl = report.signature("warp_shuffle")
    assert shfl.count == 20 and shfl.source_lines == [12, 14]  # located through the 3.6 PTX comment chain
    assert {s.stage for s in cap.snapshots} == {"ttir", "ttgir", "llir"}


def test_triton36_dot_capture_replays(tmp_path):
    report = analyze(_load("compile_dot_tf32", tmp_path))
    wgmma = report.signature("wgmma_dot")
    assert wgmma.pass_introduced == "TritonGPUAccelerateMatmul" and wgmma.source_lines == [17]
    assert report.compiler_version == "3.6.0" and report.passes_total > 50


def test_load_capture_rejects_other_directories(tmp_path):
    from kb.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="not a capture directory"):
        load_capture(tmp_path)


def test_specialization_mismatch_is_reported(golden, tmp_path):
    import shutil

    cap, _ = golden("masked_nodiv")
    work = tmp_path / "w"
    shutil.copytree(cap.workdir, work)
    ttir = next((work / "stages").glob("*.ttir"))
    text = ttir.read_text().replace("%n: i32 loc", "%n: i32 {tt.divisibility = 16 : i32} loc", 1)
    ttir.write_text(text)
    again = load_capture(work)
    assert any("n: divisibility 16 (reproduced None)" in w for w in again.warnings)
