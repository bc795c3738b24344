"""alignment_hints: true hints for sizes that are not multiples of 16, checked in the interpreter and in sm_90 PTX."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from optimizer.rewrite.alignment import count_async_copies
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

SUITE = Path(__file__).parents[2] / "benchmarks" / "suite"
RECIPE = {"kind": "alignment_hints", "params": {}}


def hinted(op: str) -> str:
    return apply_recipe(RECIPE, RecipeContext(source=(SUITE / op / "initial.py").read_text(), launches=[])).source


def test_hints_sit_on_tensors_and_align_is_computed_at_the_launch() -> None:
    src = hinted("matmul_bias_relu")
    assert "tl.multiple_of(offs_m[:, None] * stride_xm, [ALIGN, ALIGN])" in src
    assert "tl.max_constancy(k[None, :] < K, [1, ALIGN])" in src and "tl.max_constancy(k[:, None] < K, [ALIGN, 1])" in src
    assert "ALIGN: tl.constexpr" in src and "ALIGN=_ladder_align(K, M, N," in src
    assert "(8 if x.stride(1) == 1 else x.stride(1))" in src  # a unit stride keeps an aligned index aligned
    ns: dict = {}
    exec(src.split("@triton.jit")[0].split("import triton.language as tl")[1], ns)  # noqa: S102 - the helper alone
    assert ns["_ladder_align"](3000, 5000, 6000, 32) == 8 and ns["_ladder_align"](3000, 5001) == 1
    assert ns["_ladder_align"](4100, 64) == 4


def test_kernels_without_broadcast_addressing_are_refused() -> None:
    with pytest.raises(NotApplicable, match="no broadcast stride products"):
        hinted("softmax")


def test_hinted_matmul_validates_in_the_interpreter(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    path = tmp_path / "hinted.py"
    path.write_text(hinted("matmul_bias_relu"))
    ev = evaluate(load_problem(SUITE / "matmul_bias_relu"), path, backend="interpreter",
                  settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def _ptx(path: Path, K: int, align: int | None) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location(f"cand_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = mod.linear_bias_relu_kernel
    M, N = 5000, 6000
    ints = {"M": M, "N": N, "K": K, "stride_xm": K, "stride_xk": 1, "stride_wn": K, "stride_wk": 1, "stride_ym": N, "stride_yn": 1}
    consts = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32} | ({"ALIGN": align} if align else {})
    sig, attrs = {}, {}
    for i, name in enumerate(fn.arg_names):  # what the JIT would specialize for these arguments
        if name in consts:
            sig[name] = "constexpr"
        elif name.endswith("_ptr"):
            sig[name], attrs[(i,)] = "*fp16", [["tt.divisibility", 16]]
        elif ints[name] == 1:
            sig[name], consts[name] = "constexpr", 1
        else:
            sig[name] = "i32"
            if ints[name] % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
    k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 3})
    return k.asm["ptx"]


@pytest.mark.slow
def test_k3000_gets_the_async_copy_pipeline_back(tmp_path: Path) -> None:
    """The H200 campaign's slowest case (K=3000 fp16, 16x slower than cuBLAS): scalar loads before, cp.async after."""
    pytest.importorskip("triton.backends.nvidia")
    base, new = tmp_path / "base.py", tmp_path / "hinted.py"
    base.write_text((SUITE / "matmul_bias_relu" / "initial.py").read_text())
    new.write_text(hinted("matmul_bias_relu"))
    cp0, ld0 = count_async_copies(_ptx(base, 3000, None))
    cp1, ld1 = count_async_copies(_ptx(new, 3000, 8))
    cp_aligned, _ = count_async_copies(_ptx(base, 4096, None))
    assert cp0 == 0 and ld0 > 32  # element-wise global loads, no async copies
    assert cp1 == cp_aligned > 0 and ld1 < ld0
    cp_off, _ = count_async_copies(_ptx(new, 3000, 1))  # ALIGN=1 (a shape that breaks the hint): plain code again
    assert cp_off == 0
