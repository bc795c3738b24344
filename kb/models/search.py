"""Request and result models for search, quick-match, listing and invariant lookup."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kb.models.cards import AntiSignalCard, InvariantCard, PatternCard, Symptoms
from kb.vocab import Backend, CardKind, CardStatus, Level

__all__ = [
    "CardFilter",
    "CardPage",
    "InvariantQuery",
    "QuickMatchQuery",
    "ScoreBreakdown",
    "SearchHit",
    "SearchQuery",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CardFilter(_Model):
    """Structured filters, applied in our code after retrieval (Chroma ``where`` is slow and partial)."""

    kinds: list[CardKind] = Field(default_factory=list)
    backends: list[Backend] = Field(default_factory=list, description="a card for 'any' matches every backend")
    levels: list[Level] = Field(default_factory=list)
    statuses: list[CardStatus] = Field(default_factory=lambda: list[CardStatus](["active"]))


class SearchQuery(_Model):
    text: str = Field(min_length=1, max_length=4000)
    top_k: int = Field(default=5, ge=1, le=100)
    filter: CardFilter = Field(default_factory=CardFilter)
    mode: str = Field(default="hybrid", pattern=r"^(hybrid|dense|bm25)$")


class QuickMatchQuery(_Model):
    """L1 triage: what is already known about the kernel, as symptoms plus optional free text."""

    symptoms: Symptoms = Field(default_factory=Symptoms)
    text: str = Field(default="", max_length=4000)
    backend: Backend = "any"
    top_k: int = Field(default=3, ge=1, le=50)
    exclude: list[str] = Field(default_factory=list, description="card ids already tried in earlier rounds")


class InvariantQuery(_Model):
    pass_names: list[str] = Field(default_factory=list)
    ir_signatures: list[str] = Field(default_factory=list)
    backend: Backend = "any"
    text: str = ""
    top_k: int = Field(default=5, ge=1, le=50)


class ScoreBreakdown(_Model):
    dense: float = 0.0
    bm25: float = 0.0
    symptom: float = 0.0
    dense_rank: int | None = None
    bm25_rank: int | None = None
    matched_symptoms: list[str] = Field(default_factory=list)


class SearchHit(_Model):
    card: PatternCard | AntiSignalCard | InvariantCard = Field(discriminator="kind")
    score: float
    breakdown: ScoreBreakdown = Field(default_factory=ScoreBreakdown)


class CardPage(_Model):
    cards: list[PatternCard | AntiSignalCard | InvariantCard]
    next_cursor: str = ""
    total: int = 0
