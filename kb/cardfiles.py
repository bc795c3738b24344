"""Curated card files: one YAML file per card, shipped in the package under ``kb/cards/<kind>/<id>.yaml``.

Curators review cards as diffs of these files; ``seed`` loads them into an empty store, and ``load_dir`` is
also what ``ladder kb lint`` validates.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import ValidationError

from kb.errors import InvalidArgument, field_error
from kb.models import AnyCard, parse_card

__all__ = ["CardFileError", "dump_card", "load_card_file", "load_dir", "packaged_cards_dir"]


class CardFileError(InvalidArgument):
    """A card file that does not parse or validate; the message names the file and the field."""


def packaged_cards_dir() -> Path:
    return Path(str(resources.files("kb") / "cards"))


def load_card_file(path: Path) -> AnyCard:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise CardFileError(f"{path}: not UTF-8 text ({e}); save the card file as UTF-8", field=str(path)) from e
    except OSError as e:
        raise CardFileError(f"{path}: cannot read the card file: {e}", field=str(path)) from e
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise CardFileError(f"{path}: not valid YAML: {e}", field=str(path)) from e
    except (RecursionError, ValueError) as e:  # nesting too deep; an impossible date such as 2024-13-01
        raise CardFileError(f"{path}: not a usable YAML card ({type(e).__name__}: {e})", field=str(path)) from e
    if not isinstance(data, dict):
        raise CardFileError(f"{path}: a card file must hold one mapping, got {type(data).__name__}", field=str(path))
    try:
        card = parse_card(data)
    except ValidationError as e:
        where = field_error(e)
        loc = where.field or "card"
        raise CardFileError(f"{path}: field {loc}: {where.message}", field=loc) from e
    if card.id != path.stem:
        raise CardFileError(f"{path}: id {card.id!r} must equal the file name stem {path.stem!r}", field="id")
    return card


def load_dir(root: Path | None = None) -> list[AnyCard]:
    """Load every ``*.yaml`` under ``root`` (default: the packaged curated cards), sorted by id."""
    root = root or packaged_cards_dir()
    cards = [load_card_file(p) for p in sorted(root.rglob("*.yaml"))]
    return sorted(cards, key=lambda c: c.id)


def dump_card(card: AnyCard) -> str:
    """Serialise a card to the curated YAML form (defaults omitted, stable key order)."""
    data = card.model_dump(mode="json", exclude_defaults=True)
    data = {"id": card.id, "kind": card.kind, **{k: v for k, v in data.items() if k not in ("id", "kind")}}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)
