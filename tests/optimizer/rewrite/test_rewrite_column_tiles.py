"""column_tiles: a whole-row block of an element-wise row kernel becomes a (rows, column tiles) grid (interpreter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants
from optimizer.rewrite.registry import KNOB_KINDS

RECIPE = {"kind": "column_tiles", "params": {}}


def test_the_row_becomes_column_tiles_and_outputs_match(tmp_path: Path) -> None:
    res = rewrite("wide_row_glu", {"kind": "column_tiles", "params": {"values": [256]}})
    assert res.applied == {"COLUMN_TILE": 256, "num_warps": 4}
    assert "col_offsets = tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)" in res.source
    assert "gate_kernel[(a2.shape[0], triton.cdiv(n_cols, min(BLOCK_SIZE, 256)))]" in res.source
    assert "BLOCK_SIZE=min(BLOCK_SIZE, 256)" in res.source and "num_warps=4" in res.source
    same_outputs("wide_row_glu", res.source, tmp_path)  # 2500 columns: 10 tiles, the last one masked


def test_tiles_wider_than_the_recorded_block_are_dropped_and_a_narrow_block_is_refused() -> None:
    src = (KERNELS / "wide_row_glu.py").read_text()
    wide = [{"kernel": "gate_kernel", "grid": [16384], "constexprs": {"BLOCK_SIZE": 4096, "n_cols": 3000}}]
    assert [v.applied["COLUMN_TILE"] for v in apply_recipe_variants(RECIPE, RecipeContext(source=src, launches=wide))] \
        == [2048, 1024]
    narrow = [{"kernel": "gate_kernel", "grid": [16384], "constexprs": {"BLOCK_SIZE": 1024, "n_cols": 1000}}]
    with pytest.raises(NotApplicable, match="already fits one 1024-column tile"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=narrow))


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("tl.store(c + col_offsets, g.cast(y.dtype) * y, mask=mask)",
     "tl.store(c + col_offsets, g.cast(y.dtype) * y / tl.sum(x, axis=0), mask=mask)", "reduces along the row"),
    ("tl.store(c + col_offsets, g.cast(y.dtype) * y, mask=mask)", "tl.store(c + col_offsets, g.cast(y.dtype) * y)",
     "is not masked"),
    ("mask = col_offsets < n_cols", "mask = col_offsets < BLOCK_SIZE - 1", "used 1 more time"),
    ("mask = col_offsets < n_cols", "mask = col_offsets < 4000", "no mask compares the column range"),
    ("tl.store(c + col_offsets, g.cast(y.dtype) * y, mask=mask)",
     "tl.store(c + col_offsets, g.cast(y.dtype) * y, mask=mask)\n    tl.store(c, 0.0)", "every tile would write it"),
    ("gate_kernel[(a2.shape[0],)]", "gate_kernel[(a2.shape[0], 1)]", "already has 2 axes"),
    # a grid variable read elsewhere too: the rewrite read `.elements` of the name (AttributeError)
    ("        gate_kernel[(a2.shape[0],)]", "        grid = (a2.shape[0],)\n        assert len(grid) == 1\n"
     "        gate_kernel[grid]", "grid variable `grid` is used beyond this launch"),
])
def test_refusals_name_the_failed_precondition(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "wide_row_glu.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))


def test_a_row_reduction_kernel_is_outside_the_domain() -> None:
    src = (KERNELS / "tiny_block_loop.py").read_text()
    with pytest.raises(NotApplicable, match="loop|reduces"):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_it_is_structural() -> None:
    assert "column_tiles" not in KNOB_KINDS
