"""apply_recipe_variants: several points of one recipe on one base, for the session to time in one round."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe_variants

SOFTMAX = (Path(__file__).resolve().parents[1] / "data" / "softmax" / "initial.py").read_text()


def test_knob_recipes_yield_distinct_untried_points() -> None:
    recipe = {"kind": "launch_params", "params": {"search": {"num_warps": [1, 2, 4, 8, 16]}}}
    out = apply_recipe_variants(recipe, RecipeContext(source=SOFTMAX), limit=3)
    points = [r.applied["num_warps"] for r in out]
    assert len(points) == 3 == len(set(points)) and 4 not in points  # 4 is the current launch
    again = apply_recipe_variants(recipe, RecipeContext(source=SOFTMAX, tried=[r.applied for r in out]))
    assert {r.applied["num_warps"] for r in again}.isdisjoint(points) and len(again) == 1


def test_a_refusal_keeps_its_reason() -> None:
    with pytest.raises(NotApplicable, match="no tl.dot"):
        apply_recipe_variants({"kind": "dot_tile_search", "params": {}}, RecipeContext(source=SOFTMAX))
    with pytest.raises(NotApplicable, match="no offline applier"):
        apply_recipe_variants({"kind": "nope", "params": {}}, RecipeContext(source=SOFTMAX))
