"""Recipe domains: a recipe outside its declared domain is refused with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, can_apply

SUITE = Path(__file__).resolve().parents[3] / "benchmarks" / "suite"
TILE_SEARCH = {"kind": "autotune", "params": {"configs": [{"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, "num_warps": 8,
                                                           "num_stages": 3}], "key": ["M", "N", "K"]}}


def _ctx(op: str, tokens: list[str] | None = None, warps: int = 4) -> RecipeContext:
    src = (SUITE / op / "initial.py").read_text()
    return RecipeContext(source=src, launches=[{"kernel": "k", "options": {"num_warps": warps}}],
                         evidence=list(tokens) if tokens is not None else [])


def test_no_tile_search_without_a_dot() -> None:
    ok, why = can_apply(TILE_SEARCH, _ctx("rmsnorm"))
    assert not ok and "needs a tl.dot" in why


def test_num_stages_needs_a_loop() -> None:
    recipe = {"kind": "launch_params", "params": {"search": {"num_stages": [2, 3, 4]}}}
    ok, why = can_apply(recipe, _ctx("softmax", ["code:tl.load"]))
    assert not ok and "no loop" in why


def test_never_fewer_warps_on_a_spilling_kernel() -> None:
    recipe = {"kind": "launch_params", "params": {"search": {"num_warps": [2]}}}
    src = (SUITE / "softmax" / "initial.py").read_text()
    ctx = RecipeContext(source=src, bottleneck="occupancy_limited", launches=[{"kernel": "softmax_kernel", "options": {"num_warps": 4}}],
                        hot_kernel="softmax_kernel", evidence=["code:tl.load", "ir:register_spill"])
    with pytest.raises(NotApplicable, match="never fewer warps"):
        apply_recipe(recipe, ctx)
    ctx.evidence = ["code:tl.load"]
    assert apply_recipe(recipe, ctx).applied["num_warps"] == 2


def test_card_requires_and_forbids() -> None:
    recipe = {"kind": "launch_params", "params": {"search": {"num_warps": [8]}}, "requires": ["code:tl.dot|code:tl.sum"],
              "forbids": ["cause:register_spills"]}
    ok, why = can_apply(recipe, _ctx("softmax", ["code:tl.max"]))
    assert not ok and "requires code:tl.dot|code:tl.sum" in why
    ok, why = can_apply(recipe, _ctx("softmax", ["code:tl.sum", "cause:register_spills"]))
    assert not ok and "contraindicated by cause:register_spills" in why


def test_a_crashing_transform_refuses_its_card_and_names_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ladder asks ``can_apply`` of every matched card: a transform's bug becomes that card's refusal with an
    error id (the traceback is logged), never a failed ladder level."""
    from optimizer.rewrite import recipe as recipe_mod

    def broken(params: dict, ctx: RecipeContext) -> None:
        raise ValueError("negative shift count")

    monkeypatch.setattr(recipe_mod, "APPLIERS", {**recipe_mod.APPLIERS, "launch_params": broken})
    ok, why = can_apply({"kind": "launch_params", "params": {"search": {"num_warps": [8]}}}, _ctx("softmax"))
    assert not ok
    assert why.startswith("internal error in the launch_params transform (error ")
    assert why.endswith("ValueError: negative shift count")
    with pytest.raises(ValueError):  # applying it directly still raises: only the ladder's question is a boundary
        apply_recipe({"kind": "launch_params", "params": {"search": {"num_warps": [8]}}}, _ctx("softmax"))
