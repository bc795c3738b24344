"""L4 skips a related card the KB does not hold, but a KB that cannot answer is never read as "no family"."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kb.errors import NotFound, Unavailable
from optimizer.ladder.l4_compiler import CompilerLevel


class _KB:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.asked: list[str] = []

    def get_card(self, card_id: str) -> Any:
        self.asked.append(card_id)
        raise self.error


def _ctx(kb: _KB) -> Any:
    return SimpleNamespace(kb=kb, exclude_cards=set())


FINDINGS = [SimpleNamespace(cards=["inv-a", "inv-b"], signature="scalarized_load")]


def test_an_invariant_card_the_kb_does_not_hold_is_skipped() -> None:
    kb = _KB(NotFound("card 'inv-a' does not exist", field="id"))
    assert CompilerLevel()._families(_ctx(kb), FINDINGS) == []
    assert kb.asked == ["inv-a", "inv-b"]  # one missing card does not end the search


def test_an_unavailable_kb_propagates_instead_of_reading_as_no_family() -> None:
    kb = _KB(Unavailable("index not loaded"))
    with pytest.raises(Unavailable):
        CompilerLevel()._families(_ctx(kb), FINDINGS)
