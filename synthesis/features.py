"""What a round and a family look like to the mapper: the text that is embedded and the symptom tokens.

Symptom tokens use the namespaces of :meth:`kb.models.Symptoms.tokens` (``bottleneck:``, ``ir:``,
``profile:``, ``code:``). Closed vocabularies (bottleneck classes, IR signatures) are found in a round's
structured evidence and in its text; open ones (profile signals, code features) are the ones the families
use, found in the round's evidence, hypothesis and diff.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kb.models import AntiSignalCard, PatternCard, Round
from kb.vocab import BOTTLENECK_CLASSES, IR_SIGNATURES, Backend, Level, is_backend

__all__ = [
    "TokenMatcher",
    "card_backend",
    "card_text",
    "consensus",
    "first_sentence",
    "namespace_values",
    "round_levels",
    "round_text",
    "slug_words",
    "slugify",
]

_DATA_KEYS = ("bottleneck", "bottleneck_class", "signature", "signatures", "ir_signature", "ir_signatures")


def slug_words(s: str) -> str:
    """``persistent_grid-v2`` -> ``persistent grid v2``."""
    return re.sub(r"[_\-./:#]+", " ", s).strip()


def slugify(text: str) -> str:
    """A card-id-safe slug (lowercase, hyphens, 2 to 80 characters: a one-letter family name such as "x" used to
    make an invalid card id and fail the whole synthesis run)."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    s = s[:80].strip("-") or "family"
    return s if len(s) >= 2 else f"family-{s}"


def first_sentence(text: str, limit: int) -> str:
    s = re.split(r"(?<=[.;])\s", text.strip(), maxsplit=1)[0].rstrip(".;")
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def consensus(sets: Sequence[set[str]], share: float = 0.5) -> list[str]:
    """Tokens present in at least ``share`` of the sets (at least one set), sorted."""
    counts = Counter(t for s in sets for t in s)
    need = max(1, math.ceil(share * len(sets)))
    return sorted(t for t, c in counts.items() if c >= need)


def round_text(r: Round) -> str:
    """Hypothesis plus rewrite (description and family name): the round's meaning, for the embedder."""
    parts = [r.hypothesis.strip()]
    if r.rewrite is not None:
        parts += [r.rewrite.description.strip(), slug_words(r.rewrite.family)]
    return "\n".join(p for p in parts if p)


def card_text(card: PatternCard | AntiSignalCard) -> str:
    """Title, summary and rewrite of a card: the family's meaning, for the embedder."""
    parts = [card.title, card.summary]
    if card.rewrite is not None:
        parts.append(card.rewrite.description)
    return "\n".join(p.strip() for p in parts if p)


def round_levels(r: Round) -> set[Level]:
    levels = set(r.levels_reached) | {e.level for e in r.evidence}
    if r.stop is not None:
        levels.add(r.stop.level)
    return levels


def card_backend(backend: str) -> Backend:
    """The card backend of a round run on ``backend``: its device backend, else ``any`` (the CPU interpreter)."""
    return backend if backend in ("cuda", "ascend", "amd") and is_backend(backend) else "any"


def namespace_values(tokens: Iterable[str], namespace: str) -> list[str]:
    """The values of the ``namespace:value`` tokens, in order (``bottleneck:memory_bound`` -> ``memory_bound``)."""
    return [t.split(":", 1)[1] for t in tokens if t.startswith(namespace + ":")]


def _closed_pattern(term: str) -> re.Pattern[str]:
    # memory_bound matches "memory-bound", "memory bound", "memory_bound"; a trailing plural is allowed
    body = r"[\s_-]?".join(re.escape(w) for w in term.split("_"))
    return re.compile(rf"(?<![\w]){body}s?(?![\w])", re.IGNORECASE)


def _open_pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(term)}(?![\w])", re.IGNORECASE)


_CLOSED: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "bottleneck": [(x, _closed_pattern(x)) for x in sorted(BOTTLENECK_CLASSES) if x != "unknown"],
    "ir": [(x, _closed_pattern(x)) for x in sorted(IR_SIGNATURES)],
}


@dataclass
class TokenMatcher:
    """Extracts symptom tokens from rounds, knowing the open-vocabulary tokens the families use."""

    profile_signals: list[str] = field(default_factory=list)
    code_features: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._open = {
            "profile": [(x, _open_pattern(x)) for x in sorted(set(self.profile_signals))],
            "code": [(x, _open_pattern(x)) for x in sorted(set(self.code_features))],
        }

    @classmethod
    def for_cards(cls, cards: Iterable[PatternCard | AntiSignalCard]) -> TokenMatcher:
        prof: set[str] = set()
        code: set[str] = set()
        for c in cards:
            prof.update(c.symptoms.profile_signals)
            code.update(c.symptoms.code_features)
        return cls(profile_signals=sorted(prof), code_features=sorted(code))

    def round_tokens(self, r: Round) -> set[str]:
        tokens: set[str] = set()
        if r.stop is not None and r.stop.bottleneck != "unknown":
            tokens.add(f"bottleneck:{r.stop.bottleneck}")
        for e in r.evidence:
            for key in _DATA_KEYS:
                val = e.data.get(key)
                vals = val if isinstance(val, list) else [val]
                for v in vals:
                    if isinstance(v, str) and v in BOTTLENECK_CLASSES and v != "unknown":
                        tokens.add(f"bottleneck:{v}")
                    elif isinstance(v, str) and v in IR_SIGNATURES:
                        tokens.add(f"ir:{v}")
            if e.kind == "ir_signature" and e.reference in IR_SIGNATURES:
                tokens.add(f"ir:{e.reference}")
        evidence_text = "\n".join(f"{e.reference} {e.summary} {' '.join(map(str, e.data))}" for e in r.evidence)
        for ns, pats in _CLOSED.items():
            for term, pat in pats:
                if pat.search(evidence_text):
                    tokens.add(f"{ns}:{term}")
        code_text = "\n".join([r.hypothesis, evidence_text, _diff_removed(r)])
        for term, pat in self._open["profile"]:
            if pat.search(evidence_text):
                tokens.add(f"profile:{term}")
        for term, pat in self._open["code"]:
            if pat.search(code_text):
                tokens.add(f"code:{term}")
        return tokens


def _diff_removed(r: Round) -> str:
    """The code a rewrite replaced (its '-' lines): what was there is the code feature, not what came in."""
    if r.rewrite is None or not r.rewrite.diff:
        return ""
    lines = r.rewrite.diff.splitlines()
    return "\n".join(ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("---"))
