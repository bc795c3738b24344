from __future__ import annotations

import pytest
from pydantic import ValidationError

from kb.models import AntiSignalCard, InvariantCard, PatternCard, parse_card
from kb.models.trajectory import EscalationTests


def _base(**kw):
    d = {"id": "x-card", "kind": "pattern", "title": "A title", "summary": "A summary long enough.",
         "backends": ["cuda"], "levels": ["L1"]}
    d.update(kw)
    return d


def test_discriminated_union_picks_the_class():
    assert isinstance(parse_card(_base()), PatternCard)
    assert isinstance(parse_card(_base(kind="anti_signal", counterexample="c")), AntiSignalCard)
    assert isinstance(parse_card(_base(kind="invariant", passes=["p"])), InvariantCard)


@pytest.mark.parametrize("field,value", [("backends", ["gpu"]), ("levels", ["L5"]), ("id", "Bad Id"),
                                         ("symptoms", {"ir_signatures": ["not_a_signature"]}),
                                         ("symptoms", {"bottleneck_classes": ["slow"]})])
def test_vocabularies_are_enforced(field, value):
    with pytest.raises(ValidationError) as e:
        parse_card(_base(**{field: value}))
    assert field in str(e.value)


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError):
        parse_card(_base(colour="red"))


def test_invariant_fields_do_not_leak_into_patterns():
    with pytest.raises(ValidationError):
        parse_card(_base(passes=["tritongpu-coalesce"]))


def test_escalation_tests_pass_only_when_all_three_hold():
    assert EscalationTests(localized=True, single_family=True, justified=True).passed
    assert not EscalationTests(localized=True, single_family=False, justified=True).passed


def test_search_text_includes_kind_specific_fields():
    inv = parse_card(_base(kind="invariant", passes=["tritongpu-remove-layout-conversions"], legality="only if x"))
    assert "tritongpu-remove-layout-conversions" in inv.search_text()
