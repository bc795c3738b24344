"""Depth and size limits on everything the KB decodes from a client: trajectories, cards and card edits.

A document nested 100k levels deep used to reach ``json.loads`` (and pydantic) and end in a RecursionError; a
3.9 MB card body was stored, embedded and held in every search engine rebuild. Every entry point now checks
the raw JSON (``check_json``, before it is parsed) and the decoded value (``check_value``), and answers
``InvalidArgument`` naming the field. The numbers come from ``kb.settings.Settings`` (``LADDER_MAX_*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from kb.errors import InvalidArgument

__all__ = ["Limits", "check_json", "check_value"]

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


@dataclass(frozen=True)
class Limits:
    depth: int = 32  # nesting of any decoded document (a trajectory, a card, a recipe's params)
    items: int = 2000  # entries in any one list or mapping
    document_bytes: int = 4 * 1024 * 1024  # one trajectory or card as JSON
    card_body_bytes: int = 64 * 1024  # a card's body (the curated cards are under 2 KB)
    card_field_bytes: int = 8 * 1024  # any other text on a card


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
    valid Unicode (a lone surrogate), or, for a card, with a field over its size limit. Iterative: a deep value
    cannot exhaust the stack here."""
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
            pairs = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in pairs:
                if isinstance(k, str):
                    check_value(k, limits, f"{path}.<key>", kind=kind)
                stack.append((x, f"{path}.{k}", depth + 1))
