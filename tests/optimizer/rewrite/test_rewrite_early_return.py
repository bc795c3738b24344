"""early_return: `if <guard>: return` folded into `if not (<guard>):`, so rows_per_program can loop over rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.early_return import guard_early_returns
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "rows_per_program", "params": {"values": [4]}}


def test_the_guard_holds_the_rest_of_the_body_and_the_program_is_unchanged(tmp_path: Path) -> None:
    src, desc = guard_early_returns((KERNELS / "row_skip_guard.py").read_text())
    assert "    if not (src_row < 0):\n        cols = tl.arange(0, BLOCK)\n" in src
    assert "return" not in src.split("class ModelNew")[0].split('"""')[-1]  # no return left in the kernel
    assert "the final bare return dropped" in desc
    same_outputs("row_skip_guard", src, tmp_path)


def test_rows_per_program_runs_after_folding_the_guard(tmp_path: Path) -> None:
    res = rewrite("row_skip_guard", RECIPE)
    assert res.description.startswith("gather_rows_kernel: 1 early return guard(s)")
    assert "for _rpp in tl.static_range(ROWS_PER_PROGRAM):" in res.source
    assert "grid = lambda meta: (triton.cdiv(idx.shape[0], meta['ROWS_PER_PROGRAM']),)" in res.source
    same_outputs("row_skip_guard", res.source, tmp_path)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("    if src_row < 0:\n        return\n", "    if src_row < 0:\n        return\n    else:\n        pass\n",
     "not a top-level `if <guard>: return`"),
    ("    if src_row < 0:\n        return\n", "    for i in range(2):\n        if src_row < i:\n            return\n",
     "not a top-level `if <guard>: return`"),
])
def test_refusals_keep_the_transforms_reason(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "row_skip_guard.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=f"returns early.*{reason}"):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))
