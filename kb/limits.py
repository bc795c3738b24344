"""Depth and size limits on everything the KB decodes from a client: trajectories, cards and card edits.

A document nested 100k levels deep used to reach ``json.loads`` (and pydantic) and end in a RecursionError; a
3.9 MB card body was stored, embedded and held in every search engine rebuild. Capping each field was not
enough: 480 preconditions of just under 8 KiB each made a 3.8 MB card. So a card is bounded as a whole too
(``card_bytes``: the card as JSON, every field and list included) and every list on it is bounded
(``card_list_items``). Every entry point checks the raw JSON (``check_json``, before it is parsed) and the
decoded value (``check_value``), and answers ``InvalidArgument`` naming the field (for the whole-card cap: the
largest field). A request is bounded by the gRPC message limit (``LADDER_MAX_MESSAGE_BYTES``) and, for a
trajectory, by ``document_bytes``. The numbers come from ``kb.settings.Settings`` (``LADDER_MAX_*``).

Search reads at most ``INDEXED_TEXT_CHARS`` of a card's text (``Card.search_text``), so a few large cards do not
make every query slower.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from kb.errors import InvalidArgument

__all__ = ["INDEXED_TEXT_CHARS", "Limits", "check_json", "check_value"]

#: characters of a card's text that dense and BM25 retrieval index (the curated cards use under 2,000)
INDEXED_TEXT_CHARS = 16 * 1024

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


@dataclass(frozen=True)
class Limits:
    depth: int = 32  # nesting of any decoded document (a trajectory, a card, a recipe's params)
    items: int = 2000  # entries in any one list or mapping
    document_bytes: int = 4 * 1024 * 1024  # one trajectory or card as JSON
    card_body_bytes: int = 64 * 1024  # a card's body (the curated cards are under 2 KB)
    card_field_bytes: int = 8 * 1024  # any other text on a card
    card_bytes: int = 256 * 1024  # a whole card as JSON: every field, lists included
    card_list_items: int = 256  # entries in any one list on a card (preconditions, evidence, sources ...)


def check_json(raw: str | bytes, limits: Limits, field: str) -> None:
    """Refuse raw JSON that is too large or nested too deep, before a parser recurses into it."""
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > limits.document_bytes:
        raise InvalidArgument(f"{size} bytes is over the {limits.document_bytes}-byte limit "
                              "(LADDER_MAX_DOCUMENT_BYTES); send a smaller document", field=field)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    depth = deepest = 0
    for m in _BRACKETS.finditer(_STRINGS.sub("", text)):
        depth += 1 if m.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > limits.depth:
                raise InvalidArgument(f"nested more than {limits.depth} levels deep (LADDER_MAX_DEPTH)", field=field)


def check_value(value: Any, limits: Limits, field: str, *, kind: Literal["card", "document"] = "document") -> None:
    """Refuse a decoded value nested too deep, with a list or mapping over ``items`` entries, with text that is not
    valid Unicode (a lone surrogate), or, for a card, with a field over its size limit, a list over
    ``card_list_items`` entries, or more than ``card_bytes`` in all. Iterative: a deep value cannot exhaust the
    stack here."""
    _check_tree(value, limits, field, kind)
    if kind == "card":
        _check_card_total(value, limits, field)


def _check_card_total(value: Any, limits: Limits, field: str) -> None:
    """The whole card as JSON against ``card_bytes``; the error names the largest top-level field."""
    size = _json_bytes(value)
    if size <= limits.card_bytes:
        return
    where, biggest = field, size
    if isinstance(value, dict) and value:
        key = max(value, key=lambda k: _json_bytes(value[k]))
        where, biggest = f"{field}.{key}", _json_bytes(value[key])
    raise InvalidArgument(f"the card is {size} bytes as JSON, over the {limits.card_bytes}-byte limit for a whole "
                          f"card (LADDER_MAX_CARD_BYTES); this field holds {biggest} bytes of it: shorten it or "
                          "move detail to a source link", field=where)


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _check_tree(value: Any, limits: Limits, field: str, kind: Literal["card", "document"]) -> None:
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        v, path, depth = stack.pop()
        if depth > limits.depth:
            raise InvalidArgument(f"nested more than {limits.depth} levels deep (LADDER_MAX_DEPTH)", field=path)
        if isinstance(v, str):
            try:
                n = len(v.encode("utf-8"))
            except UnicodeEncodeError:
                raise InvalidArgument("text holds a lone surrogate (not valid Unicode)", field=path) from None
            if kind == "card":
                cap, name = ((limits.card_body_bytes, "LADDER_MAX_CARD_BODY_BYTES") if path.endswith(".body")
                             else (limits.card_field_bytes, "LADDER_MAX_CARD_FIELD_BYTES"))
                if n > cap:
                    raise InvalidArgument(f"{n} bytes is over the {cap}-byte limit ({name})", field=path)
        elif isinstance(v, (dict, list, tuple)):
            if len(v) > limits.items:
                raise InvalidArgument(f"{len(v)} entries is over the {limits.items}-entry limit (LADDER_MAX_ITEMS)",
                                      field=path)
            if kind == "card" and isinstance(v, (list, tuple)) and len(v) > limits.card_list_items:
                raise InvalidArgument(f"{len(v)} entries is over the {limits.card_list_items}-entry limit for a list "
                                      "on a card (LADDER_MAX_CARD_LIST_ITEMS)", field=path)
            pairs = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in pairs:
                if isinstance(k, str):
                    _check_tree(k, limits, f"{path}.<key>", kind)
                stack.append((x, f"{path}.{k}", depth + 1))
