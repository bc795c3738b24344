"""Untying a shared dot tile constexpr (BLOCK -> BLOCK_M/N/K) so the tile search can act on it (interpreter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.dot_untie import untie_tiles
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe_variants

SEARCH = {"kind": "dot_tile_search", "params": {}}


@pytest.mark.parametrize("kernel", ["dot_shared_block", "dot_shared_block_ptrs"])
def test_untie_alone_keeps_the_kernel(kernel: str, tmp_path: Path) -> None:
    src, why = untie_tiles((KERNELS / f"{kernel}.py").read_text())
    body = src.split("class ModelNew")[0]
    assert "BLOCK:" not in body and "BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr" in body
    assert "tl.zeros((BLOCK_M, BLOCK_N)" in body and "range(0, K, BLOCK_K)" in body
    assert "untied into BLOCK_M, BLOCK_N, BLOCK_K" in why
    same_outputs(kernel, src, tmp_path, atol=1e-4, rtol=1e-4)


def test_advances_in_the_k_loop_take_the_k_tile() -> None:
    src, _ = untie_tiles((KERNELS / "dot_shared_block_ptrs.py").read_text())
    assert "a_ptrs += BLOCK_K" in src and "b_ptrs += BLOCK_K * N" in src
    assert "offs_k = tl.arange(0, BLOCK_K)" in src and "BLOCK_M=16, BLOCK_N=16, BLOCK_K=16" in src


def test_tile_search_unties_first_and_diffs_against_the_original(tmp_path: Path) -> None:
    src = (KERNELS / "dot_shared_block.py").read_text()
    variants = apply_recipe_variants(SEARCH, RecipeContext(source=src))
    assert len(variants) >= 3 and all("untied" in v.description for v in variants)
    fixed = next(v for v in variants if v.applied.get("mode") == "fixed")
    assert "-def mm_shared_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):" in fixed.diff
    assert f"BLOCK_M={fixed.applied['BLOCK_M']}, BLOCK_N={fixed.applied['BLOCK_N']}" in fixed.source
    same_outputs("dot_shared_block", fixed.source, tmp_path, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("acc += tl.dot(a, b)", "acc += tl.dot(a, b) * BLOCK", "cannot tell which tile"),
    ("M, N, K, BLOCK=32)", "M, N, K, 32)", "passed positionally"),
])
def test_refusals_name_the_reason(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "dot_shared_block.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        untie_tiles(src.replace(old, new))
