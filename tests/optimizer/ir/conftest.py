"""Golden-kernel captures, compiled once per test session (each is one worker process and one compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

KERNELS = Path(__file__).parent / "kernels"

#: name -> (kernel spec, target, args, compile options). Small tiles keep each compile to a second or two.
GOLDEN: dict[str, tuple[str, str, list[str], dict]] = {
    "top2_argmax": ("top2_argmax.py::top2_argmax", "cuda:90",
                    ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024", "BLOCK=256"], {"num_warps": 1}),
    "top2_values": ("top2_values.py::top2_values", "cuda:90",
                    ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024", "BLOCK=256"], {"num_warps": 1}),
    "masked_nodiv": ("masked_copy.py::masked_copy", "cuda:90", ["X=*fp32", "Y=*fp32", "n=1000", "BLOCK=1024"], {}),
    "masked_div": ("masked_copy.py::masked_copy", "cuda:90", ["X=*fp32", "Y=*fp32", "n=1024", "BLOCK=1024"], {}),
    "row_sum": ("row_sum.py::row_sum", "cuda:90", ["X=*fp32", "OUT=*fp32", "stride=1024", "BLOCK=1024"],
                {"num_warps": 4}),
    "spill": ("spill_tile.py::spill_tile", "cuda:90", ["X=*fp32", "Y=*fp32", "BLOCK=2048"],
              {"num_warps": 1, "maxnreg": 32}),
    "gather": ("gather.py::gather", "cuda:90", ["X=*fp32", "IDX=*i32", "Y=*fp32", "BLOCK=256"], {}),
    "transpose": ("transpose.py::transpose", "cuda:90", ["X=*fp32", "Y=*fp32", "M=64", "N=64"], {}),
    "atomic_hist": ("atomic_hist.py::atomic_hist", "cuda:90", ["X=*fp32", "OUT=*fp32", "BLOCK=256"], {"num_warps": 4}),
}
_DOT_ARGS = ["A=*fp32", "B=*fp32", "C=*fp32", "K=256", "stride_am=64", "stride_bk=32", "stride_cm=32",
             "BLOCK_M=64", "BLOCK_N=32", "BLOCK_K=16"]
GOLDEN |= {
    "dot_ieee_90": ("dot_f32.py::dot_f32", "cuda:90", [*_DOT_ARGS, "PRECISION=ieee"], {"num_warps": 4, "num_stages": 3}),
    "dot_tf32_90": ("dot_f32.py::dot_f32", "cuda:90", [*_DOT_ARGS, "PRECISION=tf32"], {"num_warps": 4, "num_stages": 3}),
    "dot_tf32_80": ("dot_f32.py::dot_f32", "cuda:80", [*_DOT_ARGS, "PRECISION=tf32"], {"num_warps": 4, "num_stages": 3}),
    "dot_tf32_90_s1": ("dot_f32.py::dot_f32", "cuda:90", [*_DOT_ARGS, "PRECISION=tf32"], {"num_warps": 4, "num_stages": 1}),
    "dot_tf32x3_90": ("dot_f32.py::dot_f32", "cuda:90", [*_DOT_ARGS, "PRECISION=tf32x3"], {"num_warps": 4}),
    "dot_default_90": ("dot_f32_default.py::dot_f32_default", "cuda:90", _DOT_ARGS, {"num_warps": 4}),
    "dot_default_80": ("dot_f32_default.py::dot_f32_default", "cuda:80", _DOT_ARGS, {"num_warps": 4}),
}
ASCEND: dict[str, tuple[str, list[str]]] = {
    "top2_argmax": ("top2_argmax.py::top2_argmax", ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024", "BLOCK=256"]),
    "gather": ("gather.py::gather", ["X=*fp32", "IDX=*i32", "Y=*fp32", "BLOCK=256"]),
    "masked": ("masked_copy.py::masked_copy", ["X=*fp32", "Y=*fp32", "n=1000", "BLOCK=1024"]),
}


@pytest.fixture(scope="session")
def golden(tmp_path_factory: pytest.TempPathFactory):
    """``golden(name)`` -> (Capture, IRReport), captured on first use and cached for the session."""
    from optimizer.ir import analyze, capture_kernel

    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            spec, target, args, options = GOLDEN[name]
            cap = capture_kernel(str(KERNELS / spec), target, args, options=options,
                                 workdir=tmp_path_factory.mktemp(f"ir-{name}"))
            cache[name] = (cap, analyze(cap))
        return cache[name]

    return get


@pytest.fixture(scope="session")
def ascend_golden(tmp_path_factory: pytest.TempPathFactory):
    from optimizer.ir import analyze, capture_kernel, find_ascend_python

    if find_ascend_python() is None:
        pytest.skip("no triton-ascend environment: run `make ascend-env` (about 30 s) to enable the Ascend tests")
    cache: dict[str, tuple] = {}

    def get(name: str):
        if name not in cache:
            spec, args = ASCEND[name]
            cap = capture_kernel(str(KERNELS / spec), "ascend", args, workdir=tmp_path_factory.mktemp(f"asc-{name}"))
            cache[name] = (cap, analyze(cap))
        return cache[name]

    return get
