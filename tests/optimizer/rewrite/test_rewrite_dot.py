"""dot_precision: fp32 ieee tl.dot -> tf32x3 under an fp32 tolerance, tf32 only when the tolerance allows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "dot_precision", "params": {}}
TIGHT = {"atol": 1e-4, "rtol": 1e-4}


@pytest.mark.parametrize("kernel", ["dot_tile", "dot_kloop", "dot_bmm"])
def test_ieee_dots_become_tf32x3_and_still_match(kernel: str, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE, tolerance=TIGHT)
    assert res.applied == {"input_precision": "tf32x3"}
    assert "\"ieee\"" not in res.source and "allow_tf32=" not in res.source
    assert res.source.count("input_precision='tf32x3'") == (2 if kernel == "dot_bmm" else 1)
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_tf32_only_under_a_loose_tolerance() -> None:
    src = (KERNELS / "dot_kloop.py").read_text()
    tight = apply_recipe_variants(RECIPE, RecipeContext(source=src, tolerance=TIGHT))
    unknown = apply_recipe_variants(RECIPE, RecipeContext(source=src))
    loose = apply_recipe_variants(RECIPE, RecipeContext(source=src, tolerance={"atol": 1e-2, "rtol": 1e-2}))
    assert [r.applied["input_precision"] for r in tight] == ["tf32x3"] == [r.applied["input_precision"] for r in unknown]
    assert [r.applied["input_precision"] for r in loose] == ["tf32x3", "tf32"]


def test_tf32x3_compiles_for_sm90(tmp_path: Path) -> None:
    """The installed Triton lowers the rewritten dot for Hopper (no GPU needed)."""
    import triton
    from rewrite_support import load
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    res = rewrite("dot_tile", RECIPE, tolerance=TIGHT)
    path = tmp_path / "tf32x3_tile.py"
    path.write_text(res.source)
    mod = load(path, interpret=False)
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    src = ASTSource(mod.tile_mm_kernel, sig, constexprs={"BM": 64, "BN": 64, "BK": 32})
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32)).asm["ptx"]
    assert "wgmma" in ptx or "mma" in ptx  # tensor cores, not the FMA path of ieee


@pytest.mark.parametrize(("kernel", "ctx", "reason"), [
    ("elem_scale", {}, "no tl.dot"),
    ("dot_kloop", {"backend": "ascend"}, "NVIDIA dot precision"),
    ("dot_kloop", {"launches": [{"kernel": "mm_kernel", "signature": {"a_ptr": "*bf16", "b_ptr": "*bf16"}}]}, "no fp32 operand"),
])
def test_refusals(kernel: str, ctx: dict, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text(), **ctx))
    res = rewrite("dot_tile", RECIPE)
    with pytest.raises(NotApplicable, match="no tl.dot runs with input_precision='ieee'"):
        apply_recipe(RECIPE, RecipeContext(source=res.source))
