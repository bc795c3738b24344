"""One ValidationError-to-field formatter (``kb.errors.field_error``) behind every transport: card files, the
gRPC edge (``retrieval.convert``), the MCP tools and the review CLI name the same field. No KB, no server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError, model_validator

from kb.cardfiles import CardFileError, load_card_file, load_dir
from kb.errors import InvalidArgument, field_error
from kb.models import parse_card
from kb.models.cards import Card

_FIRST = load_dir()[0]
GOOD = _FIRST.model_dump(mode="json", exclude_defaults=True) | {"id": "fe-card", "kind": _FIRST.kind}
KINDS = "missing or unknown; use pattern, anti_signal or invariant"


class Batch(BaseModel):
    cards: list[Card]


class Whole(BaseModel):
    a: int = 0

    @model_validator(mode="after")
    def _positive(self) -> Whole:
        if self.a < 0:
            raise ValueError("a must not be negative")
        return self


def _error(fn: Any, *args: Any) -> ValidationError:
    with pytest.raises(ValidationError) as e:
        fn(*args)
    return e.value


@pytest.mark.parametrize("kind", [None, "recipe"])
def test_a_missing_or_unknown_card_kind_is_reported_at_kind(kind: str | None) -> None:
    data = {k: v for k, v in GOOD.items() if k != "kind"} | ({"kind": kind} if kind else {})
    assert field_error(_error(parse_card, data))[:2] == ("kind", KINDS)


def test_the_union_branch_is_not_a_field_and_list_indices_are() -> None:
    err = field_error(_error(parse_card, GOOD | {"preconditions": ["ok", 7]}))
    assert err.field == "preconditions.1" and err.message == "Input should be a valid string" and err.input == 7
    nested = field_error(_error(Batch.model_validate, {"cards": [GOOD, GOOD | {"title": None}]}))
    assert nested.field == "cards.1.title"
    assert field_error(_error(Batch.model_validate, {"cards": [{"id": "x"}]})).field == "cards.0.kind"


def test_an_error_of_the_whole_input_has_an_empty_field() -> None:
    err = field_error(_error(Whole.model_validate, {"a": -1}))
    assert err.field == "" and "must not be negative" in err.message


def test_card_files_name_the_field(tmp_path: Path) -> None:
    path = tmp_path / "fe-card.yaml"
    path.write_text(yaml.safe_dump(GOOD | {"kind": "recipe"}))
    with pytest.raises(CardFileError) as e:
        load_card_file(path)
    assert e.value.field == "kind" and e.value.message == f"{path}: field kind: {KINDS}"
    path.write_text(yaml.safe_dump(GOOD | {"preconditions": [[1]]}))
    with pytest.raises(CardFileError) as e:
        load_card_file(path)
    assert e.value.field == "preconditions.0"
    assert e.value.message == f"{path}: field preconditions.0: Input should be a valid string"


def test_the_grpc_edge_prefixes_the_field_and_shows_the_input() -> None:
    from retrieval.convert import validate

    with pytest.raises(InvalidArgument) as e:
        validate(Batch, {"cards": [GOOD | {"preconditions": [12345]}]}, "request")
    assert e.value.field == "request.cards.0.preconditions.0"
    assert e.value.message == "Input should be a valid string (got '12345')"
    with pytest.raises(InvalidArgument) as e:
        validate(Whole, {"a": -1})
    assert e.value.field == "request"


def test_mcp_tools_and_the_review_cli_use_the_same_field() -> None:
    from optimizer.cli.review import parse_card_data
    from retrieval.mcp_server import _query

    with pytest.raises(InvalidArgument) as e:
        _query(Batch, cards=[GOOD | {"title": 3}])
    assert e.value.field == "cards.0.title" and e.value.message == "cards.0.title: Input should be a valid string"
    with pytest.raises(InvalidArgument) as e:
        _query(Whole, a=-1)  # no field: the tool's arguments as a whole (this raised IndexError before)
    assert e.value.field == "arguments" and "must not be negative" in e.value.message
    with pytest.raises(InvalidArgument) as e:
        parse_card_data(GOOD | {"title": 3}, "edited card")
    assert e.value.field == "card" and e.value.message == "edited card: title: Input should be a valid string"
