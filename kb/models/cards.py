"""Card models: pattern cards, anti-signals and compiler invariants (DESIGN "Card schema").

Pydantic is the only schema. The wire layer converts these to protobuf in one module; curated card files
(YAML) are validated by these models when the KB is seeded or linted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from kb.limits import INDEXED_TEXT_CHARS
from kb.vocab import Backend, BottleneckClass, CardStatus, IRSignature, Level

__all__ = [
    "AntiSignalCard",
    "Card",
    "CardStats",
    "Evidence",
    "InvariantCard",
    "PatternCard",
    "Provenance",
    "Recipe",
    "Rewrite",
    "Symptoms",
    "Verification",
    "parse_card",
]

SLUG = r"^[a-z0-9][a-z0-9._-]{1,95}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Symptoms(_Model):
    """What a card is evidence for; L1 quick-match scores agreement on these tokens."""

    bottleneck_classes: list[BottleneckClass] = Field(default_factory=list)
    profile_signals: list[str] = Field(default_factory=list, description="e.g. aiv_scalar_ratio, dram_throughput")
    ir_signatures: list[IRSignature] = Field(default_factory=list)
    code_features: list[str] = Field(default_factory=list, description="e.g. tl.argmax, masked_load, row_per_program")

    def tokens(self) -> set[str]:
        """All symptom tokens, namespaced so that a class and a feature with the same word stay distinct."""
        return (
            {f"bottleneck:{x}" for x in self.bottleneck_classes}
            | {f"profile:{x}" for x in self.profile_signals}
            | {f"ir:{x}" for x in self.ir_signatures}
            | {f"code:{x}" for x in self.code_features}
        )


class Recipe(_Model):
    """A machine-applicable rewrite the offline proposer knows how to apply.

    ``kind`` selects the applier (e.g. ``launch_params``, ``autotune``, ``compiler_hints``, ``rows_per_program``);
    ``params`` are its arguments (search spaces, hint names, ...).
    """

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    params: dict[str, Any] = Field(default_factory=dict)
    requires: list[str] = Field(default_factory=list, description="evidence tokens the recipe's domain needs "
                                "(code:<feature>, ir:<signature>, cause:<cause>; 'a|b' = either)")
    forbids: list[str] = Field(default_factory=list,
                               description="evidence tokens that put the kernel outside the domain")


class Rewrite(_Model):
    description: str = Field(min_length=1)
    recipe: Recipe | None = None


class Evidence(_Model):
    kind: Literal["measurement", "ir", "profile", "source", "doc", "trajectory"]
    text: str = Field(min_length=1)
    source: str | None = Field(default=None, description="URL, compiler source path@version, or trajectory/round ref")
    metric: dict[str, float] = Field(default_factory=dict)


class Verification(_Model):
    """What was checked against an installed compiler, with which version, and what it showed."""

    what: str
    tool: str = Field(description="e.g. 'triton 3.5.1' or 'triton-ascend 3.2.0'")
    result: str
    date: str | None = None


class Provenance(_Model):
    origin: Literal["curated", "synthesized"] = "curated"
    rounds: list[str] = Field(default_factory=list, description="trajectory_id#round refs this card was mined from")
    author: str | None = None


class CardStats(_Model):
    cited: int = 0
    applied: int = 0
    verified: int = 0
    lift_mean: float | None = None
    lift_ci_low: float | None = None
    lift_ci_high: float | None = None
    lift_n: int = 0


class _CardBase(_Model):
    id: str = Field(pattern=SLUG)
    title: str = Field(min_length=3, max_length=200)
    summary: str = Field(min_length=10, max_length=600)
    body: str = ""
    backends: list[Backend] = Field(min_length=1)
    levels: list[Level] = Field(min_length=1)
    symptoms: Symptoms = Field(default_factory=Symptoms)
    preconditions: list[str] = Field(default_factory=list)
    rewrite: Rewrite | None = None
    interpretation: str = ""
    evidence: list[Evidence] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list, description="ids of related cards (lint checks they resolve)")
    compiler_scope: list[str] = Field(default_factory=list)
    verification: list[Verification] = Field(default_factory=list)
    status: CardStatus = "active"
    version: int = Field(default=1, ge=1)
    provenance: Provenance = Field(default_factory=Provenance)
    stats: CardStats = Field(default_factory=CardStats)

    @field_validator("backends", "levels")
    @classmethod
    def _dedupe(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))

    def search_text(self) -> str:
        """The text indexed for dense and BM25 retrieval: at most ``kb.limits.INDEXED_TEXT_CHARS`` characters, so
        a card near the size cap costs search no more than a long curated card (the embedding model reads only its
        first 256 tokens anyway)."""
        return self._full_text()[:INDEXED_TEXT_CHARS]

    def _full_text(self) -> str:
        parts = [self.title, self.summary, self.interpretation, " ".join(self.preconditions)]
        if self.rewrite:
            parts.append(self.rewrite.description)
        s = self.symptoms
        parts += [" ".join(s.bottleneck_classes), " ".join(s.profile_signals), " ".join(s.ir_signatures)]
        parts += [" ".join(s.code_features), self.body]
        return "\n".join(p for p in parts if p)


class PatternCard(_CardBase):
    kind: Literal["pattern"] = "pattern"


class AntiSignalCard(_CardBase):
    kind: Literal["anti_signal"] = "anti_signal"
    trigger_evidence: list[str] = Field(default_factory=list)
    contraindicated: list[str] = Field(default_factory=list, description="transforms this evidence forbids")
    counterexample: str = ""

    def _full_text(self) -> str:
        extra = [" ".join(self.trigger_evidence), " ".join(self.contraindicated), self.counterexample]
        return super()._full_text() + "\n" + "\n".join(x for x in extra if x)


class InvariantCard(_CardBase):
    kind: Literal["invariant"] = "invariant"
    passes: list[str] = Field(default_factory=list, description="pass names as they appear in per-pass dump headers")
    legality: str = ""
    question_templates: list[str] = Field(default_factory=list)

    def _full_text(self) -> str:
        extra = [" ".join(self.passes), self.legality, " ".join(self.question_templates)]
        return super()._full_text() + "\n" + "\n".join(x for x in extra if x)


Card = Annotated[PatternCard | AntiSignalCard | InvariantCard, Field(discriminator="kind")]
_CARD_ADAPTER: TypeAdapter[Card] = TypeAdapter(Card)


def parse_card(data: dict[str, Any]) -> PatternCard | AntiSignalCard | InvariantCard:
    """Validate a mapping (from YAML, JSON or the wire) into the right card class."""
    return _CARD_ADAPTER.validate_python(data)
