"""The real-launch capture path. Needs a CUDA GPU (verified on a lent H200, Triton 3.6, torch 2.11); skipped in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
KERNELS = Path(__file__).parent / "kernels"


def _gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.skipif(not _gpu(), reason="needs a CUDA GPU")
def test_launch_capture_matches_jit_specialization(tmp_path):
    from optimizer.ir import analyze, capture_kernel

    args = ["X=*fp32[4096]", "Y=*fp32[4096]", "n=1000", "BLOCK=1024"]
    cap = capture_kernel(f"{KERNELS}/masked_copy.py::masked_copy", "cuda:90", args, mode="launch", grid=(4,),
                         workdir=tmp_path)
    assert cap.launched and cap.device and cap.resources is not None and cap.resources.registers > 0
    assert "driver" in cap.resources.source or "function attributes" in cap.resources.source
    assert {"ttir", "ttgir", "ptx"} <= set(cap.stages) and len(cap.snapshots) > 20
    report = analyze(cap)
    assert "masked_load_not_vectorized" in report.names()  # n=1000: the JIT gives n no divisibility either
    warm = capture_kernel(f"{KERNELS}/masked_copy.py::masked_copy", "cuda:90",
                          ["X=*fp32", "Y=*fp32", "n=1024", "BLOCK=1024"], mode="launch", workdir=tmp_path / "w")
    assert not warm.launched and "vector_global_load" in analyze(warm).names()  # warmup: compiled, not run
