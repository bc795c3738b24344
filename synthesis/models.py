"""Synthesis models: family mappings, review proposals and the result of one synthesis run.

A :class:`Proposal` is what curators review: a draft card (a ``kb.models`` card, never a second schema) plus
the evidence that produced it, a confidence and the nearest existing family for side-by-side review.
Proposals move ``pending -> approved | rejected | merged``; :meth:`Proposal.transition` enforces that and
:func:`card_on_approval` says which card the KB should store once a proposal is approved.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from kb.errors import Conflict, InvalidArgument
from kb.models import AnyCard, Card, CardStats, CauseRecord

__all__ = [
    "PROPOSAL_STATUSES",
    "PROPOSAL_TRANSITIONS",
    "REVIEW_ACTIONS",
    "EvidenceRef",
    "FamilyCandidate",
    "FamilyMapping",
    "MappingComponents",
    "Proposal",
    "ProposalKind",
    "ProposalStatus",
    "ReviewAction",
    "SynthesisReport",
    "SynthesisResult",
    "card_on_approval",
]

ProposalKind = Literal["new_family", "example", "anti_signal", "deprecation", "edit", "new_cause"]
ProposalStatus = Literal["pending", "approved", "rejected", "merged"]
PROPOSAL_STATUSES: tuple[ProposalStatus, ...] = get_args(ProposalStatus)
#: what a reviewer may do with a pending proposal (synthesis.curation.Curator.review)
ReviewAction = Literal["approve", "reject", "edit", "merge"]
REVIEW_ACTIONS: tuple[ReviewAction, ...] = get_args(ReviewAction)

#: Allowed review transitions. ``merged``: the curator folded the draft into an existing card instead.
PROPOSAL_TRANSITIONS: dict[str, frozenset[str]] = {
    "pending": frozenset({"approved", "rejected", "merged"}),
    "rejected": frozenset({"pending"}),
    "approved": frozenset(),
    "merged": frozenset(),
}


def _now() -> datetime:
    return datetime.now(timezone.utc)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MappingComponents(_Model):
    """The four agreement scores behind a mapping, each in [0, 1]; ``None`` when the round carries no such data."""

    dense: float = Field(description="cosine of hypothesis+rewrite vs the family text (all-MiniLM-L6-v2)")
    symptoms: float | None = Field(default=None, description="set cosine of symptom tokens")
    levels: float | None = Field(default=None, description="share of the round's evidence levels the family serves")
    cited: float | None = Field(default=None, description="1 rewrite names the card, 0.7 cited, 0.3 related cited")


class FamilyCandidate(_Model):
    family_id: str
    score: float
    components: MappingComponents


class FamilyMapping(_Model):
    """One round mapped to an existing pattern family (``family_id``) or to none (a new-family candidate)."""

    round_ref: str = Field(description="trajectory_id#round_index")
    family_id: str | None
    confidence: float = Field(ge=0.0, le=1.0, description="confidence in this decision (match or no match)")
    score: float = Field(description="combined score of the best family")
    components: MappingComponents
    candidates: list[FamilyCandidate] = Field(default_factory=list, description="nearest families, best first")


class EvidenceRef(_Model):
    """A round that backs a proposal."""

    round_ref: str
    problem: str = ""
    backend: str = ""
    outcome: str = ""
    speedup: float | None = Field(default=None, description="geomean speedup vs the round's comparison target")
    lift: float | None = Field(default=None, description="speedup over the incumbent (what the rewrite added)")
    confidence: float | None = Field(default=None, description="mapping confidence of this round, if mapped")
    note: str = ""
    copies: int = Field(default=1, ge=1, description="identical rounds folded into this one; they count once")


class Proposal(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{2,160}$")
    kind: ProposalKind
    status: ProposalStatus = "pending"
    card: Card = Field(description="the draft card as it would be stored on approval")
    cause: CauseRecord | None = Field(default=None, description="new_cause: the cause as it would be stored on "
                                      "approval; ``card`` is then the family that removed it (new, or an existing "
                                      "one with the evidence added)")
    target_family: str | None = Field(default=None, description="the card changed, or the nearest existing family")
    base_version: int | None = Field(default=None, description="version of target_family the draft was built on")
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[EvidenceRef] = Field(default_factory=list)
    nearest: list[FamilyCandidate] = Field(default_factory=list, description="nearest existing families")
    reason: str = ""
    created_at: datetime = Field(default_factory=_now)
    author: str = "synthesis@offline"
    polished: bool = False
    reviewer: str | None = None
    reviewer_notes: str = ""
    reviewed_at: datetime | None = None

    def transition(
        self, to: ProposalStatus, *, reviewer: str, notes: str = "", at: datetime | None = None
    ) -> Proposal:
        """Return a copy in state ``to``; raises ``Conflict`` for a transition the review workflow forbids."""
        if to not in PROPOSAL_TRANSITIONS[self.status]:
            allowed = ", ".join(sorted(PROPOSAL_TRANSITIONS[self.status])) or "none (final state)"
            raise Conflict(f"proposal {self.id} is {self.status}; it can move to: {allowed}", field="status")
        if not reviewer:
            raise InvalidArgument("a review decision needs a reviewer name", field="reviewer")
        return self.model_copy(
            update={"status": to, "reviewer": reviewer, "reviewer_notes": notes, "reviewed_at": at or _now()}
        )


def card_on_approval(proposal: Proposal, *, into: AnyCard | None = None) -> AnyCard:
    """The card to store when ``proposal`` is approved (or merged ``into`` an existing card).

    new_family / anti_signal / new_cause drafts become ``active``; edit drafts keep the target's status;
    deprecation drafts are already ``deprecated``. ``into``: the card as it is stored *now*. Pass it when merging a
    new-family draft into a family the curator chose, and when approving an ``example`` proposal (or a
    ``new_cause`` one whose family exists): the draft's evidence and
    provenance rounds are then appended to the current version (version bumped), so two example proposals
    drafted on the same base version never overwrite each other's evidence.
    """
    card = proposal.card
    if into is not None:
        known = {e.source for e in into.evidence}
        evidence = into.evidence + [e for e in card.evidence if e.source not in known]
        rounds = list(dict.fromkeys(into.provenance.rounds + card.provenance.rounds))
        prov = into.provenance.model_copy(update={"rounds": rounds})
        return into.model_copy(update={"evidence": evidence, "provenance": prov, "version": into.version + 1})
    if proposal.kind in ("new_family", "anti_signal", "new_cause") and card.status in ("draft", "proposed"):
        return card.model_copy(update={"status": "active"})
    return card


class SynthesisReport(_Model):
    """Counts and timing of one synthesis run."""

    trajectories: int = 0
    rounds: int = 0
    categories: dict[str, int] = Field(default_factory=dict, description="round category -> count")
    mapped: int = 0
    unmatched: int = 0
    proposals: dict[str, int] = Field(default_factory=dict, description="proposal kind -> count")
    excluded: dict[str, str] = Field(default_factory=dict, description="round ref -> why it was not mined")
    pending_rounds: list[str] = Field(default_factory=list, description="unmatched rounds left for a later batch")
    polished: int = 0
    duration_s: float = 0.0
    rounds_per_min: float = 0.0


class SynthesisResult(_Model):
    proposals: list[Proposal] = Field(default_factory=list)
    mappings: list[FamilyMapping] = Field(default_factory=list)
    stats: dict[str, CardStats] = Field(default_factory=dict, description="card id -> recomputed stats")
    report: SynthesisReport = Field(default_factory=SynthesisReport)
