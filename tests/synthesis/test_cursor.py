"""A ListProposals cursor the server did not issue is the caller's mistake (InvalidArgument on ``cursor``), whatever
is wrong with it; the catch in ``_decode_cursor`` names the errors a malformed token raises, not every exception."""

from __future__ import annotations

import base64
import json

import pytest

from kb.errors import InvalidArgument
from synthesis.curation import _decode_cursor, _encode_cursor


def _token(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


def test_an_issued_cursor_round_trips() -> None:
    assert _decode_cursor(_encode_cursor(("2024-05-01T00:00:00", "prop-1"))) == ("2024-05-01T00:00:00", "prop-1")
    assert _decode_cursor("") is None


@pytest.mark.parametrize("cursor", [
    "garbage!",  # not base64 (binascii.Error)
    _token(b"not json"),  # JSONDecodeError
    _token(b"\xff\xfe"),  # not UTF-8
    _token(b"7"),  # not a pair (TypeError)
    _token(b'["a", "b", "c"]'),  # three values (ValueError)
    _token(b"[" * 100_000),  # nested past the recursion limit (RecursionError)
    _token(json.dumps(["\ud800", "p"]).encode()),  # a lone surrogate SQLite cannot bind (UnicodeEncodeError)
])
def test_a_malformed_cursor_is_invalid_argument_on_cursor(cursor: str) -> None:
    with pytest.raises(InvalidArgument) as e:
        _decode_cursor(cursor)
    assert e.value.field == "cursor" and "ListProposals" in e.value.message
