"""Issue 32, item 3: a card is bounded as a whole and every list on it is bounded (480 preconditions of just under
8 KiB each made a 3.8 MB card that every per-field cap let through), errors name the field, and search reads a
bounded prefix of each card's text."""

from __future__ import annotations

import pytest

from kb.errors import InvalidArgument
from kb.limits import INDEXED_TEXT_CHARS, Limits
from kb.models import PatternCard
from kb.service import check_storable
from kb.settings import Settings


def _card(**kw) -> PatternCard:
    base = dict(id="big-card", title="Big card", summary="A card that walks around the caps.", backends=["cuda"],
                levels=["L1"])
    return PatternCard(**(base | kw))


def test_many_preconditions_under_the_field_cap_are_refused_as_a_list():
    card = _card(preconditions=["p" * (8 * 1024 - 100)] * 480)
    with pytest.raises(InvalidArgument) as e:
        check_storable(card, "card", Limits())
    assert e.value.field == "card.preconditions" and "LADDER_MAX_CARD_LIST_ITEMS" in e.value.message


def test_a_card_over_the_total_cap_names_its_largest_field():
    card = _card(preconditions=["p" * (8 * 1024 - 100)] * 40, body="b" * 60_000)  # 40 x 8 KB + 60 KB > 256 KiB
    with pytest.raises(InvalidArgument) as e:
        check_storable(card, "card", Limits())
    assert e.value.field == "card.preconditions" and "LADDER_MAX_CARD_BYTES" in e.value.message


def test_the_whole_card_cap_counts_every_field_and_nested_list():
    evidence = [{"kind": "doc", "text": "e" * 7000, "source": "s" * 1000} for _ in range(40)]
    card = _card(evidence=evidence)
    with pytest.raises(InvalidArgument) as e:
        check_storable(card, "card", Limits())
    assert e.value.field == "card.evidence"
    check_storable(_card(evidence=evidence[:20]), "card", Limits())  # 20 x 8 KB is under the cap


def test_card_limits_come_from_settings(monkeypatch):
    monkeypatch.setenv("LADDER_MAX_CARD_BYTES", "8192")
    monkeypatch.setenv("LADDER_MAX_CARD_LIST_ITEMS", "8")
    limits = Settings().limits
    assert limits.card_bytes == 8192 and limits.card_list_items == 8
    with pytest.raises(InvalidArgument):
        check_storable(_card(sources=["s"] * 9), "card", limits)


def test_search_text_is_bounded():
    card = _card(body="word " * 100_000)
    assert len(card.search_text()) == INDEXED_TEXT_CHARS
    small = _card(body="short body")
    assert small.search_text().endswith("short body")


def test_upsert_refuses_the_red_team_card(kb):
    with pytest.raises(InvalidArgument) as e:
        kb.upsert_card(_card(preconditions=["p" * (8 * 1024 - 100)] * 480))
    assert e.value.field == "card.preconditions"


def test_an_engine_rebuild_parses_only_changed_cards(kb, monkeypatch):
    import kb.service as service

    kb.served_cards()
    parsed = []
    real = service.parse_card
    monkeypatch.setattr(service, "parse_card", lambda d: parsed.append(d["id"]) or real(d))
    kb.upsert_card(_card(id="fresh-card"))
    kb.search(__import__("kb.models.search", fromlist=["SearchQuery"]).SearchQuery(text="fresh card"))
    assert parsed.count("fresh-card") >= 1 and len(set(parsed)) <= 2  # the new card (and nothing else re-parsed)
