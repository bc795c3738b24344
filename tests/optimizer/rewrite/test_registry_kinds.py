"""The recipe registry covers every recipe kind the knowledge base can name, and its docstring lists them all."""

from __future__ import annotations

from pathlib import Path

import yaml

from kb.models.cards import PatternCard, parse_card
from optimizer.rewrite import registry
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.registry import APPLIERS, REGISTRY, UNSERVED_KINDS

ROOT = Path(__file__).resolve().parents[3]


def _card_kinds() -> set[str]:
    kinds = set()
    for f in sorted((ROOT / "kb" / "cards" / "patterns").glob("*.yaml")):
        card = parse_card(yaml.safe_load(f.read_text()))
        if isinstance(card, PatternCard) and card.rewrite is not None and card.rewrite.recipe is not None:
            kinds.add(card.rewrite.recipe.kind)
    return kinds


def test_every_card_recipe_kind_is_declared() -> None:
    kinds = _card_kinds()
    assert len(kinds) > 20  # the cards were read
    assert kinds - set(REGISTRY) - UNSERVED_KINDS == set()
    assert not UNSERVED_KINDS & set(REGISTRY)
    assert set(APPLIERS) == set(REGISTRY)


def test_the_registry_is_read_only() -> None:
    try:
        REGISTRY["x"] = REGISTRY["autotune"]  # type: ignore[index]
    except TypeError:
        pass
    else:
        raise AssertionError("REGISTRY accepted an assignment")
    assert "x" not in APPLIERS


def test_the_docstring_lists_every_kind() -> None:
    doc = registry.__doc__ or ""
    assert [k for k in [*REGISTRY, *UNSERVED_KINDS] if f"``{k}``" not in doc] == []


def test_an_unserved_kind_is_refused_with_the_reason() -> None:
    try:
        apply_recipe({"kind": "split_k", "params": {}}, RecipeContext(source="import triton\n"))
    except NotApplicable as exc:
        assert "no offline applier for recipe kind 'split_k'" in str(exc)
    else:
        raise AssertionError("split_k was applied")


def test_a_refusal_is_a_ladder_error_that_survives_pickling() -> None:
    import pickle

    from kb.errors import LadderError, error_for_code
    from optimizer.rewrite.errors import NotApplicable as Refusal

    assert Refusal is NotApplicable and issubclass(Refusal, LadderError)
    assert error_for_code("not_applicable") is Refusal
    try:
        apply_recipe({"kind": "value_only_reduction", "params": {}}, RecipeContext(source="import triton\n"))
    except LadderError as exc:
        assert exc.code == "not_applicable" and "no @triton.jit kernel" in str(exc)
        back = pickle.loads(pickle.dumps(exc))
        assert type(back) is Refusal and str(back) == str(exc)
    else:
        raise AssertionError("a source without a kernel was rewritten")
