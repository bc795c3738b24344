"""Review and synthesis clients: the curation queue over an embedded KB or over SynthesisService.

``ReviewClient`` is the small protocol ``ladder review``, ``ladder synthesize`` and the review web page speak.
``LocalReview`` drives a ``synthesis.curation.Curator`` in process; ``RemoteReview`` calls the SynthesisService
stub of a running server (errors come back as ``kb.errors`` exceptions). ``connect_review`` picks one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from kb.errors import InvalidArgument, Unavailable
from kb.models import AnyCard, Trajectory
from kb.service import KnowledgeBase
from kb.settings import Settings
from retrieval import convert
from retrieval.client.remote import GrpcKBClient
from retrieval.v1 import ladder_pb2 as pb
from synthesis.curation import Curator
from synthesis.models import PROPOSAL_STATUSES, REVIEW_ACTIONS, EvidenceRef, Proposal

__all__ = [
    "STATUSES",
    "LocalReview",
    "RemoteReview",
    "ReviewClient",
    "ReviewItem",
    "card_fields",
    "collapse_evidence",
    "connect_review",
]

STATUSES = PROPOSAL_STATUSES  # one source each: the Literals in synthesis.models
ACTIONS = REVIEW_ACTIONS


@dataclass(frozen=True)
class ReviewItem:
    """A proposal with the existing family a reviewer should see beside it (``None`` when there is none)."""

    proposal: Proposal
    nearest: AnyCard | None = None

    def to_json(self) -> dict[str, Any]:
        return {"proposal": self.proposal.model_dump(mode="json"),
                "nearest": self.nearest.model_dump(mode="json") if self.nearest else None}


@runtime_checkable
class ReviewClient(Protocol):
    def proposals(self, status: str | None = "pending") -> list[Proposal]: ...

    def get(self, proposal_id: str) -> ReviewItem: ...

    def review(self, proposal_id: str, action: str, *, reviewer: str, reason: str = "",
               card: AnyCard | None = None, merge_into: str = "") -> ReviewItem: ...

    def propose_edit(self, card: AnyCard, *, author: str, reason: str = "") -> ReviewItem:
        """Queue an edit of a served card as a new version; the old one stays served until approval."""
        ...

    def get_card(self, card_id: str) -> AnyCard: ...

    def submit(self, trajectory: Trajectory) -> bool: ...

    def synthesize(self, *, only_new: bool = True, timeout: float = 600.0) -> dict[str, Any]:
        """Run one synthesis batch to completion; returns the report (with ``new_proposals``)."""
        ...

    def close(self) -> None: ...


def _check_status(status: str | None) -> str | None:
    if status in (None, "", "all"):
        return None
    if status not in STATUSES:
        raise InvalidArgument(f"status must be one of {', '.join(STATUSES)} or all, got {status!r}", field="status")
    return status


def _check_action(action: str) -> None:
    if action not in ACTIONS:
        raise InvalidArgument(f"action must be one of {', '.join(ACTIONS)}, got {action!r}", field="action")


def collapse_evidence(evidence: list[EvidenceRef]) -> list[tuple[EvidenceRef, int]]:
    """Evidence rows a reviewer sees, duplicates collapsed: rows that differ only in their round reference (the
    same measured result pasted into many trajectories) become one row with their count (``copies`` included)."""
    rows: dict[tuple[object, ...], tuple[EvidenceRef, int]] = {}
    for e in evidence:
        key = (e.problem, e.backend, e.outcome, e.speedup, e.lift, e.confidence, e.note)
        first, n = rows.get(key, (e, 0))
        rows[key] = (first, n + e.copies)
    return list(rows.values())


def card_fields(card: AnyCard) -> dict[str, str]:
    """The fields a reviewer compares, as plain text (id, title, summary, symptoms, rewrite, evidence ...)."""
    s = card.symptoms
    symptoms = "; ".join(f"{k}: {', '.join(v)}" for k, v in (
        ("bottleneck", s.bottleneck_classes), ("profile", s.profile_signals), ("ir", s.ir_signatures),
        ("code", s.code_features)) if v)
    out = {"id": card.id, "kind": card.kind, "title": card.title, "status / version": f"{card.status} v{card.version}",
           "summary": card.summary, "backends": ", ".join(card.backends), "levels": ", ".join(card.levels),
           "symptoms": symptoms, "preconditions": "\n".join(f"- {x}" for x in card.preconditions),
           "rewrite": card.rewrite.description if card.rewrite else "", "interpretation": card.interpretation,
           "evidence": "\n".join(f"- [{e.kind}] {e.text} ({e.source or 'no source'})" for e in card.evidence),
           "provenance": f"{card.provenance.origin}; rounds: {', '.join(card.provenance.rounds) or '-'}",
           "related": ", ".join(card.related)}
    if card.kind == "anti_signal":
        out["contraindicated"] = ", ".join(card.contraindicated)
        out["counterexample"] = card.counterexample
    elif card.kind == "invariant":
        out["passes"] = ", ".join(card.passes)
        out["legality"] = card.legality
    return out


class LocalReview:
    """The queue over an embedded KB (this process is its single writer)."""

    def __init__(self, kb: KnowledgeBase, *, owns: bool = False, curator: Curator | None = None) -> None:
        self.kb = kb
        self.curator = curator or Curator(kb)
        self._owns = owns

    def proposals(self, status: str | None = "pending") -> list[Proposal]:
        return self.curator.proposals(_check_status(status))

    def _item(self, p: Proposal) -> ReviewItem:
        return ReviewItem(p, self.curator.nearest_family(p))

    def get(self, proposal_id: str) -> ReviewItem:
        return self._item(self.curator.proposal(proposal_id))

    def review(self, proposal_id: str, action: str, *, reviewer: str, reason: str = "",
               card: AnyCard | None = None, merge_into: str = "") -> ReviewItem:
        _check_action(action)
        return self._item(self.curator.review(proposal_id, action, reviewer=reviewer, reason=reason, card=card,  # type: ignore[arg-type]
                                              merge_into=merge_into))

    def propose_edit(self, card: AnyCard, *, author: str, reason: str = "") -> ReviewItem:
        return self._item(self.curator.propose_edit(card, author=author, reason=reason))

    def get_card(self, card_id: str) -> AnyCard:
        return self.kb.get_card(card_id)

    def submit(self, trajectory: Trajectory) -> bool:
        return self.kb.submit_trajectory(trajectory)

    def synthesize(self, *, only_new: bool = True, timeout: float = 600.0) -> dict[str, Any]:
        result = self.curator.run(only_new=only_new)
        return result.report.model_dump(mode="json") | {"new_proposals": len(result.proposals)}

    def close(self) -> None:
        if self._owns:
            self.kb.close()

    def __enter__(self) -> LocalReview:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RemoteReview:
    """The queue of a running server, through its SynthesisService (writes need a reviewer token)."""

    def __init__(self, client: GrpcKBClient, *, poll_s: float = 0.2) -> None:
        self.client = client
        self.stub = client.synthesis
        self.poll_s = poll_s

    def _item(self, msg: pb.ReviewItem) -> ReviewItem:
        return ReviewItem(*convert.from_proto_review_item(msg))

    def proposals(self, status: str | None = "pending") -> list[Proposal]:
        req = pb.ListProposalsRequest(status=_check_status(status) or "", page_size=500)
        out: list[Proposal] = []
        while True:  # pages stop at the server's message limit; follow next_cursor to the end of the queue
            resp = self.client.call(self.stub.ListProposals, req)
            out += [convert.from_proto_proposal(p) for p in resp.proposals]
            if not resp.next_cursor:
                return out
            req.cursor = resp.next_cursor

    def get(self, proposal_id: str) -> ReviewItem:
        return self._item(self.client.call(self.stub.GetProposal, pb.GetProposalRequest(proposal_id=proposal_id)))

    def review(self, proposal_id: str, action: str, *, reviewer: str, reason: str = "",
               card: AnyCard | None = None, merge_into: str = "") -> ReviewItem:
        _check_action(action)
        if not proposal_id:
            raise InvalidArgument("a proposal id is required; see `ladder review list`", field="proposal_id")
        req = convert.to_proto_review(proposal_id, action, reviewer=reviewer, reason=reason, card=card,
                                      merge_into=merge_into)
        return self._item(self.client.call(self.stub.Review, req))

    def propose_edit(self, card: AnyCard, *, author: str, reason: str = "") -> ReviewItem:
        req = convert.to_proto_review("", "edit", reviewer=author, reason=reason, card=card)
        return self._item(self.client.call(self.stub.Review, req))

    def get_card(self, card_id: str) -> AnyCard:
        return self.client.get_card(card_id)

    def submit(self, trajectory: Trajectory) -> bool:
        return self.client.submit_trajectory(trajectory)

    def synthesize(self, *, only_new: bool = True, timeout: float = 600.0) -> dict[str, Any]:
        job = self.client.call(self.stub.RunSynthesis, pb.RunSynthesisRequest(only_new=only_new))
        deadline = time.monotonic() + timeout
        while job.state not in ("done", "failed"):
            if time.monotonic() > deadline:
                raise Unavailable(f"synthesis job {job.job_id} still {job.state} after {timeout:.0f}s "
                                  f"({job.message}); it keeps running on the server")
            time.sleep(self.poll_s)
            job = self.client.call(self.stub.GetJob, pb.GetJobRequest(job_id=job.job_id))
        if job.state == "failed":
            raise Unavailable(f"synthesis job {job.job_id} failed: {job.message}")
        report, new = convert.from_proto_job_result(job)
        return report.model_dump(mode="json") | {"new_proposals": new}

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteReview:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect_review(server: str | None = None, *, home: str | Path | None = None, settings: Settings | None = None,
                   token: str | None = None, kb: KnowledgeBase | None = None,
                   timeout: float = 30.0) -> LocalReview | RemoteReview:
    """The one factory: SynthesisService of ``server`` (``HOST:PORT``) when given, else an embedded KB: ``kb`` if
    passed, else the one at ``home`` opened here. Closing the review client closes that KB too."""
    settings = settings or Settings()
    if home is not None:
        settings = settings.model_copy(update={"home": Path(home).expanduser()})
    if server:
        return RemoteReview(GrpcKBClient(server, settings, token=token, timeout=timeout))
    if kb is not None:
        return LocalReview(kb, owns=True)
    return LocalReview(KnowledgeBase.open(settings), owns=True)
