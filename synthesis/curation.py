"""Curation: the domain service behind SynthesisService and ``ladder review``.

A ``Curator`` runs synthesis batches over the trajectories stored in a KnowledgeBase (as background jobs with
status), keeps the proposal queue, and applies review decisions: approve, reject (with a reason), edit, merge
into an existing family. Manual edits of served cards enter the same queue (``propose_edit``); the old version
stays served until the edit is approved. Approving stores the card through the KB, in the same transaction as
the proposal's new state, and the next quick-match serves it (no restart). Everything is stored in the KB's
SQLite store; a crash mid-run loses no acknowledged data and applies no decision halfway.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from kb.errors import Conflict, InvalidArgument, NotFound, log_error
from kb.models import AnyCard, CauseRecord, PatternCard, parse_card
from kb.service import KnowledgeBase, check_storable
from synthesis.mining import CachedEmbed, Embed, FamilyIndex
from synthesis.models import (
    REVIEW_ACTIONS,
    EvidenceRef,
    Proposal,
    ReviewAction,
    SynthesisResult,
    card_on_approval,
)
from synthesis.pipeline import SynthesisConfig, synthesize

log = logging.getLogger(__name__)

__all__ = ["Curator", "Job", "ProposalPage", "ReviewAction"]


#: proposal kinds that create a card under a new id (a new_cause one does when its family is new)
_NEW_CARD_KINDS = ("new_family", "anti_signal", "new_cause")


def _new_card_ids(proposals: list[dict[str, Any]]) -> set[str]:
    """Card ids that earlier new-card proposals use (any state: an approved one is a live card, a pending one may
    become one)."""
    return {d["card"]["id"] for d in proposals if d.get("kind") in _NEW_CARD_KINDS and isinstance(d.get("card"), dict)}


def _new_cause_ids(proposals: list[dict[str, Any]]) -> set[str]:
    """Cause ids that earlier new_cause proposals use (any state)."""
    return {d["cause"]["id"] for d in proposals if isinstance(d.get("cause"), dict) and d["cause"].get("id")}


def _refs(p: Proposal | dict[str, Any]) -> frozenset[str]:
    evidence = p.evidence if isinstance(p, Proposal) else p.get("evidence") or []
    return frozenset(e.round_ref if isinstance(e, EvidenceRef) else str(e.get("round_ref")) for e in evidence)


class Job(dict):
    """A synthesis job record (JSON-able): job_id, kind, state, done, total, message, result."""


@dataclass(frozen=True)
class ProposalPage:
    """One page of the queue, oldest first. ``cursors[i]`` continues after ``proposals[i]`` (a transport that
    must cut the page short uses it); ``next_cursor`` continues after the whole page ("" on the last one)."""

    proposals: list[Proposal]
    cursors: list[str]
    next_cursor: str


def _encode_cursor(key: tuple[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def _decode_cursor(cursor: str) -> tuple[str, str] | None:
    if not cursor:
        return None
    try:
        at, pid = (str(v) for v in json.loads(base64.urlsafe_b64decode(cursor.encode())))
        at.encode(), pid.encode()  # a lone surrogate cannot be bound as SQLite text
        return at, pid
    except (ValueError, TypeError, RecursionError) as e:  # base64/JSON/unicode errors, a non-pair: the caller's token
        raise InvalidArgument("cursor is not one returned by ListProposals; pass '' for the first page",
                              field="cursor") from e


class Curator:
    def __init__(self, kb: KnowledgeBase, config: SynthesisConfig | None = None, *, embed: Embed | None = None) -> None:
        self.kb = kb
        self.config = config or SynthesisConfig()
        self._run_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._closing = threading.Event()
        # re-runs embed only rounds they have not seen; ``embed`` replaces the KB's model (tests, benchmarks)
        self._embed = CachedEmbed(embed or kb.embedder.encode)
        self._index: FamilyIndex | None = None
        self._index_key: tuple[tuple[str, int], ...] = ()
        if not kb.store.readonly:  # a read-only opener leaves the owner's jobs alone
            kb.store.fail_interrupted_jobs()

    def _family_index(self, cards: list[AnyCard]) -> FamilyIndex:
        """The family index, rebuilt only when the active pattern cards (ids, versions) change."""
        families = [c for c in cards if isinstance(c, PatternCard) and c.status in self.config.family_statuses]
        key = tuple((c.id, c.version) for c in families)
        if self._index is None or key != self._index_key:
            self._index = FamilyIndex.build(families, self._embed, self.config.mining)
            self._index_key = key
        return self._index

    # ------------------------------------------------------------------ synthesis runs
    def run(self, *, only_new: bool = True, job_id: str | None = None) -> SynthesisResult:
        """One synthesis batch. Proposals come from the batch's rounds; card statistics are recomputed from all
        stored evidence, deduplicated (one trajectory per content hash), on every run, so a run with nothing new
        leaves them as they were and a copy never adds to them."""
        with self._run_lock:
            store = self.kb.store
            # what this run answers for, read once before mining: a trajectory that arrives while the run mines
            # stays unsynthesized, and the next run mines it (it used to be marked synthesized unmined)
            arrived = store.trajectories(only_new=True)  # copies included: they are marked with their first copy
            arrived_ids = {t.id for t in arrived}
            history = store.trajectories(unique=True)
            batch = ([t for t in store.trajectories(only_new=True, unique=True) if t.id in arrived_ids]
                     if only_new else history)
            cards = store.served_cards()
            job = self._job_update(job_id, state="running", done=0, total=len(batch)) if job_id else None

            def progress(stage: str, done: int, total: int) -> None:
                if job is not None and job_id:  # job is set only for a job id
                    self._job_update(job_id, message=f"{stage} {done}/{total}")

            # stats need every trajectory; proposals come only from the batch (ids are stable, so re-mining a
            # reviewed round never reopens its proposal). New-card ids already used by a proposal of an earlier
            # run are reserved (a second run names its new family "x-2", not "x"); a new-card draft whose rounds
            # an earlier proposal already covers is not proposed again.
            earlier = store.list_proposals()
            result = synthesize(history, cards, self._embed, config=self.config, progress=progress,
                                index=self._family_index(cards), reserved_ids=_new_card_ids(earlier),
                                causes=store.causes(), reserved_causes=_new_cause_ids(earlier))
            batch_refs = {t.id for t in batch}
            covered = {_refs(p) for p in earlier}
            # a new cause is another finding about the same rounds: only an earlier new_cause covers it
            covered_causes = {_refs(p) for p in earlier if p.get("kind") == "new_cause"}
            fresh = [p for p in result.proposals if batch_refs and
                     (not p.evidence or any(e.round_ref.split("#")[0] in batch_refs for e in p.evidence))
                     and not (p.kind in _NEW_CARD_KINDS
                              and _refs(p) in (covered_causes if p.kind == "new_cause" else covered))]
            store.commit_synthesis([(p.id, p.status, p.model_dump(mode="json")) for p in fresh],
                                   {cid: st.model_dump(mode="json") for cid, st in result.stats.items()},
                                   sorted(batch_refs | arrived_ids))
            self.kb.invalidate()  # card stats changed: the next read rebuilds the engine once
            result = result.model_copy(update={"proposals": fresh})
            if job_id:
                self._job_update(job_id, state="done", done=len(batch), message="done",
                                 result=result.report.model_dump(mode="json") | {"new_proposals": len(fresh)})
            return result

    def start_job(self, *, only_new: bool = True) -> dict[str, Any]:
        """Queue a synthesis run in a background thread; poll ``job(job_id)`` for its status."""
        job_id = f"syn-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"
        self._job_update(job_id, state="queued", done=0, total=0, message="queued")

        def work() -> None:
            try:
                self.run(only_new=only_new, job_id=job_id)
            except Exception as e:  # noqa: BLE001 - job thread boundary: reported through the job record, with its id
                if not self._closing.is_set():  # a job cut off by shutdown is marked failed at the next open
                    error_id = log_error(log, e, f"synthesis job {job_id}")
                    self._job_update(job_id, state="failed", message=f"{type(e).__name__}: {e} (error {error_id})")

        t = threading.Thread(target=work, name=f"job-{job_id}", daemon=True)
        self._threads.append(t)
        t.start()
        return self.job(job_id)

    def close(self, timeout: float = 30.0) -> None:
        """Wait (up to ``timeout`` s in all) for running synthesis jobs before the KB closes. A job still running
        then is abandoned; its trajectories stay unsynthesized and the next open marks the job failed."""
        self._closing.set()
        end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))

    def job(self, job_id: str) -> dict[str, Any]:
        return self.kb.store.get_job(job_id)

    def _job_update(self, job_id: str, **fields: Any) -> dict[str, Any]:
        store = self.kb.store
        try:
            doc = store.get_job(job_id)
        except NotFound:
            doc = {"job_id": job_id, "kind": "synthesis", "state": "queued", "done": 0, "total": 0, "message": ""}
        doc.update(fields)
        store.put_job(job_id, "synthesis", doc["state"], doc)
        return doc

    # ------------------------------------------------------------------ the queue
    def proposals(self, status: str | None = None) -> list[Proposal]:
        return [Proposal.model_validate(d) for d in self.kb.store.list_proposals(status or None)]

    def proposal_page(self, status: str | None = None, page_size: int = 100, cursor: str = "") -> ProposalPage:
        """Up to ``page_size`` (1..500) proposals after ``cursor``, oldest first."""
        if not 1 <= page_size <= 500:
            raise InvalidArgument(f"page_size must be in 1..500, got {page_size}", field="page_size")
        rows = self.kb.store.proposal_page(status or None, after=_decode_cursor(cursor), limit=page_size + 1)
        more, rows = len(rows) > page_size, rows[:page_size]
        cursors = [_encode_cursor(key) for key, _ in rows]
        return ProposalPage([Proposal.model_validate(d) for _, d in rows], cursors,
                            cursors[-1] if more else "")

    def proposal(self, proposal_id: str) -> Proposal:
        return Proposal.model_validate(self.kb.store.get_proposal(proposal_id))

    def nearest_family(self, proposal: Proposal) -> AnyCard | None:
        """The existing card a reviewer should see beside the proposal."""
        target = proposal.target_family or (proposal.nearest[0].family_id if proposal.nearest else None)
        if not target:
            return None
        try:
            return self.kb.get_card(target)
        except NotFound:
            return None

    def review(self, proposal_id: str, action: ReviewAction, *, reviewer: str, reason: str = "",
               card: dict[str, Any] | AnyCard | None = None, merge_into: str = "") -> Proposal:
        """Apply one review decision. Everything is checked first; the card write and the proposal's new state
        are then stored in one transaction, so a decision is applied once or not at all. Deciding a proposal
        that is no longer pending is a ``Conflict`` that writes nothing (a retried approval adds no version)."""
        p = self.proposal(proposal_id)
        if action not in REVIEW_ACTIONS:
            raise InvalidArgument(f"unknown action {action!r}; use one of {', '.join(REVIEW_ACTIONS)}",
                                  field="action")
        if p.status != "pending":
            raise Conflict(f"proposal {p.id} is already {p.status} (by {p.reviewer or 'someone'}); nothing was "
                           "changed", field="status")
        write: AnyCard | None = None
        cause: CauseRecord | None = None  # a new_cause proposal's cause, stored with its card
        deprecate: str | None = None
        deprecate_version: int | None = None
        if action == "reject":
            if not reason.strip():
                raise InvalidArgument("rejecting needs a reason the author can act on", field="reason")
            done = p.transition("rejected", reviewer=reviewer, notes=reason)
        elif action == "edit":
            if card is None:
                raise InvalidArgument("edit needs the edited card", field="card")
            check_storable(card, "card", self.kb.settings.limits)
            edited = card if not isinstance(card, dict) else parse_card(card)
            if edited.kind != p.card.kind:
                raise InvalidArgument(f"the edited card must stay a {p.card.kind}", field="card.kind")
            done = p.model_copy(update={"card": edited, "reviewer": reviewer, "reviewer_notes": reason})
        elif action == "approve":
            done = p.transition("approved", reviewer=reviewer, notes=reason)
            if p.kind == "edit":
                self._check_base(p)
            if p.kind == "deprecation":
                deprecate, deprecate_version = p.target_family or p.card.id, p.base_version
            elif p.kind in ("example", "new_cause") and p.target_family:
                # fold into the family as it is now, so two examples drafted on one version keep both
                write = card_on_approval(p, into=self.kb.get_card(p.target_family))
            else:
                write = card_on_approval(p)
            if p.kind == "new_cause" and p.cause is not None:
                cause = p.cause.model_copy(update={"status": "active"})
        else:
            if not merge_into:
                raise InvalidArgument("merge needs the id of the family to merge into", field="merge_into")
            done = p.transition("merged", reviewer=reviewer, notes=reason or f"merged into {merge_into}")
            into = self.kb.get_card(merge_into)
            if not isinstance(into, PatternCard):
                raise InvalidArgument(f"{merge_into!r} is a {into.kind}, not a pattern family", field="merge_into")
            write = card_on_approval(p, into=into).model_copy(update={"status": into.status})
            if p.kind == "new_cause" and p.cause is not None:  # the cause names the family it was merged into
                fams = list(dict.fromkeys(into.id if f == p.card.id else f for f in p.cause.families))
                cause = p.cause.model_copy(update={"status": "active", "families": fams})
        fresh = action == "approve" and p.kind in _NEW_CARD_KINDS and not (p.kind == "new_cause" and p.target_family)
        stored = self.kb.decide_proposal(p.id, expect=p.status, status=done.status, doc=done.model_dump(mode="json"),
                                         card=write, deprecate=deprecate, reason=reason or p.reason, fresh_id=fresh,
                                         deprecate_version=deprecate_version, cause=cause)
        if fresh and stored is not None and write is not None and stored.id != write.id:
            return self.proposal(p.id)  # stored under a suffixed id: the stored proposal says which
        return done

    # ------------------------------------------------------------------ manual edits of served cards
    def propose_edit(self, card: dict[str, Any] | AnyCard, *, author: str, reason: str = "") -> Proposal:
        """Queue an edit of an existing card as a new version for review. The current version stays served
        until the proposal is approved; approving a stale edit (the card moved on meanwhile) is refused."""
        check_storable(card, "card", self.kb.settings.limits)
        edited = card if not isinstance(card, dict) else parse_card(card)
        current = self.kb.get_card(edited.id)
        if edited.kind != current.kind:
            raise InvalidArgument(f"{edited.id} is a {current.kind}; an edit cannot change the kind", field="card.kind")
        keep = {"version", "stats", "status"}
        if edited.model_dump(exclude=keep) == current.model_dump(exclude=keep):
            raise InvalidArgument(f"the edit of {edited.id} changes nothing", field="card")
        draft = edited.model_copy(update={"status": current.status, "version": current.version + 1,
                                          "stats": current.stats})
        digest = hashlib.sha1(draft.model_dump_json(exclude={"version", "stats"}).encode()).hexdigest()[:10]
        pid = f"edit.{current.id}.v{current.version}.{digest}"
        try:
            existing = self.proposal(pid)
        except NotFound:
            existing = None
        if existing is not None:
            if existing.status != "pending":
                raise Conflict(
                    f"this exact edit was already {existing.status} ({existing.reviewer_notes or 'no note'})",
                    field="card",
                )
            return existing
        p = Proposal(id=pid, kind="edit", card=draft, target_family=current.id, base_version=current.version,
                     confidence=1.0, author=author or "reviewer",
                     reason=reason or f"manual edit of {current.id} v{current.version}")
        self.kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
        return p

    def _check_base(self, p: Proposal) -> None:
        target = p.target_family or p.card.id
        current = self.kb.get_card(target)
        if p.base_version is not None and current.version != p.base_version:
            raise Conflict(f"{target} moved to v{current.version} after this edit was proposed on v{p.base_version}; "
                           "reject it and edit the current version", field="base_version")
