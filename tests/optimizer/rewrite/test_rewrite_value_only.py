"""``value_only_reduction`` on the rewrite engine: the argmin form, comments kept, and the refusals' reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.registry import APPLIERS
from optimizer.rewrite.value_only import ValueOnlyReduction

SRC = (Path(__file__).parents[1] / "data" / "top2" / "initial.py").read_text()
RECIPE = {"kind": "value_only_reduction", "params": {}}


def test_runs_on_the_engine() -> None:
    assert isinstance(getattr(APPLIERS["value_only_reduction"], "transform", None), ValueOnlyReduction)


def test_argmin_with_a_comment_above_it() -> None:
    src = (SRC.replace("tl.max(", "tl.min(").replace("tl.argmax(", "tl.argmin(")
           .replace("    first_idx = ", "    # the winner\n    first_idx = "))
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "    # the winner\n    first_idx_is_ext = x == tl.expand_dims(first, 0)\n" in res.source
    assert "second = tl.where(first_idx_count > 1, first, second)" in res.source and "tl.argmin" not in res.source
    assert res.applied == {"index": "first_idx", "values": "x"} and res.description.startswith("argmin of x")


def test_an_extreme_value_is_added_when_none_is_computed() -> None:
    src = SRC.replace("first = tl.max(x, axis=0)", "first = tl.max(x + 0, axis=0)")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "first_idx_value = tl.max(x, axis=0)" in res.source
    assert "second = tl.where(first_idx_count > 1, first_idx_value, second)" in res.source


def test_refusals_say_why() -> None:
    with pytest.raises(NotApplicable, match="do not feed a max/min reduction"):
        src = SRC.replace("second = tl.max(rest, axis=0)", "second = tl.sum(rest, axis=0)")
        apply_recipe(RECIPE, RecipeContext(source=src))
    with pytest.raises(NotApplicable, match="no tl.argmax / tl.argmin"):
        apply_recipe(RECIPE, RecipeContext(source=SRC.replace("tl.argmax(x, axis=0)", "tl.max(x, axis=0)")))
    with pytest.raises(NotApplicable, match="already tried"):
        apply_recipe(RECIPE, RecipeContext(source=SRC, tried=[{"index": "first_idx", "values": "x"}]))
