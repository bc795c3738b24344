"""The one place where pydantic models (kb.models, synthesis.models) and protobuf messages (retrieval.v1) meet.

Every ``from_proto_*`` validates through pydantic and raises ``kb.errors.InvalidArgument`` whose ``field`` is
the dotted path of the offending request field (e.g. ``card.symptoms.ir_signatures.0``). Trajectories are the
one document that travels as JSON (``trajectory_json``, schema in protos/retrieval/v1/trajectory.schema.json).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import BaseModel, ValidationError

from kb.errors import InvalidArgument, field_error
from kb.limits import Limits, check_json
from kb.models import AnyCard, CauseRecord, Trajectory, parse_card
from kb.models.search import (
    CardFilter,
    CardPage,
    InvariantQuery,
    QuickMatchQuery,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
)
from retrieval.v1 import ladder_pb2 as pb
from synthesis.models import MappingComponents, Proposal, SynthesisReport

__all__ = [
    "from_json_trajectory",
    "from_proto_card",
    "from_proto_cause",
    "from_proto_causes",
    "from_proto_job_result",
    "from_proto_proposal",
    "from_proto_review_card",
    "from_proto_review_item",
    "from_proto_trajectory",
    "from_proto_filter",
    "from_proto_hits",
    "from_proto_page",
    "from_proto_invariant_query",
    "from_proto_quick_match",
    "from_proto_search",
    "to_proto_card",
    "to_proto_cause",
    "to_proto_causes",
    "to_proto_job",
    "to_proto_proposal",
    "to_proto_review",
    "to_proto_review_item",
    "to_proto_trajectory",
    "to_proto_filter",
    "to_proto_hits",
    "to_proto_page",
    "validate",
]


def validate(model: type[BaseModel], data: dict[str, Any], prefix: str = "") -> Any:
    """``model.model_validate(data)`` with pydantic errors turned into InvalidArgument naming the field."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise _invalid(e, prefix) from e


def _invalid(e: ValidationError, prefix: str) -> InvalidArgument:
    where = field_error(e)
    field = ".".join(x for x in (prefix, where.field) if x) or "request"
    return InvalidArgument(f"{where.message} (got {str(where.input)[:80]!r})", field=field)


# ---------------------------------------------------------------- cards
def to_proto_card(card: AnyCard) -> pb.Card:
    d = card.model_dump(mode="json")
    msg = pb.Card(
        id=card.id, kind=card.kind, title=card.title, summary=card.summary, body=card.body,
        backends=list(card.backends), levels=list(card.levels),
        symptoms=pb.Symptoms(**d["symptoms"]),
        preconditions=card.preconditions, interpretation=card.interpretation,
        evidence=[pb.Evidence(kind=e.kind, text=e.text, source=e.source or "", metric=e.metric) for e in card.evidence],
        sources=card.sources, related=card.related, compiler_scope=card.compiler_scope,
        verification=[pb.Verification(what=v.what, tool=v.tool, result=v.result, date=v.date or "")
                      for v in card.verification],
        status=card.status, version=card.version,
        provenance=pb.Provenance(origin=card.provenance.origin, rounds=card.provenance.rounds,
                                 author=card.provenance.author or ""),
        stats=pb.CardStats(**{k: v for k, v in d["stats"].items() if v is not None}),
    )
    if card.rewrite is not None:
        msg.rewrite.description = card.rewrite.description
        if card.rewrite.recipe is not None:
            msg.rewrite.recipe.kind = card.rewrite.recipe.kind
            msg.rewrite.recipe.params.update(d["rewrite"]["recipe"]["params"])
            msg.rewrite.recipe.requires.extend(card.rewrite.recipe.requires)
            msg.rewrite.recipe.forbids.extend(card.rewrite.recipe.forbids)
    if card.kind == "anti_signal":
        msg.anti_signal.CopyFrom(pb.AntiSignalFields(trigger_evidence=card.trigger_evidence,
                                                     contraindicated=card.contraindicated,
                                                     counterexample=card.counterexample))
    elif card.kind == "invariant":
        msg.invariant.CopyFrom(pb.InvariantFields(passes=card.passes, legality=card.legality,
                                                  question_templates=card.question_templates))
    return msg


def _struct_to_dict(s: Struct, field: str) -> dict[str, Any]:
    try:
        out = json_format.MessageToDict(s)
    except ValueError as exc:  # protobuf refuses Infinity / NaN in a Struct number (JSON has no such value)
        raise InvalidArgument(f"{exc}; give finite numbers (a block size, a warp count) or strings",
                              field=field) from exc
    return _ints(out)


def _ints(v: Any) -> Any:
    """Struct stores numbers as doubles; give integral values back as ints (block sizes, warp counts)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, dict):
        return {k: _ints(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_ints(x) for x in v]
    return v


def from_proto_card(msg: pb.Card, prefix: str = "card") -> AnyCard:
    if not msg.kind:
        raise InvalidArgument("kind is required: pattern, anti_signal or invariant", field=f"{prefix}.kind")
    if msg.kind not in ("pattern", "anti_signal", "invariant"):
        raise InvalidArgument(f"unknown kind {msg.kind!r}; use pattern, anti_signal or invariant",
                              field=f"{prefix}.kind")
    d: dict[str, Any] = {
        "id": msg.id, "kind": msg.kind, "title": msg.title, "summary": msg.summary, "body": msg.body,
        "backends": list(msg.backends), "levels": list(msg.levels),
        "symptoms": {k: list(getattr(msg.symptoms, k)) for k in
                     ("bottleneck_classes", "profile_signals", "ir_signatures", "code_features")},
        "preconditions": list(msg.preconditions), "interpretation": msg.interpretation,
        "evidence": [{"kind": e.kind, "text": e.text, "source": e.source or None, "metric": dict(e.metric)}
                     for e in msg.evidence],
        "sources": list(msg.sources), "related": list(msg.related), "compiler_scope": list(msg.compiler_scope),
        "verification": [{"what": v.what, "tool": v.tool, "result": v.result, "date": v.date or None}
                         for v in msg.verification],
        "status": msg.status or "proposed", "version": msg.version or 1,
        "provenance": {"origin": msg.provenance.origin or "curated", "rounds": list(msg.provenance.rounds),
                       "author": msg.provenance.author or None},
    }
    if msg.HasField("stats"):
        st = msg.stats
        d["stats"] = {"cited": st.cited, "applied": st.applied, "verified": st.verified, "lift_n": st.lift_n,
                      **{k: getattr(st, k) for k in ("lift_mean", "lift_ci_low", "lift_ci_high") if st.HasField(k)}}
    if msg.HasField("rewrite"):
        d["rewrite"] = {"description": msg.rewrite.description}
        if msg.rewrite.HasField("recipe"):
            d["rewrite"]["recipe"] = {"kind": msg.rewrite.recipe.kind,
                                      "params": _struct_to_dict(msg.rewrite.recipe.params,
                                                                f"{prefix}.rewrite.recipe.params"),
                                      "requires": list(msg.rewrite.recipe.requires),
                                      "forbids": list(msg.rewrite.recipe.forbids)}
    if msg.kind == "anti_signal" and msg.HasField("anti_signal"):
        a = msg.anti_signal
        d.update(trigger_evidence=list(a.trigger_evidence), contraindicated=list(a.contraindicated),
                 counterexample=a.counterexample)
    if msg.kind == "invariant" and msg.HasField("invariant"):
        i = msg.invariant
        d.update(passes=list(i.passes), legality=i.legality, question_templates=list(i.question_templates))
    try:
        return parse_card(d)
    except ValidationError as e:
        raise _invalid(e, prefix) from e


# ---------------------------------------------------------------- queries
def from_proto_filter(f: pb.CardFilter) -> dict[str, Any]:
    d: dict[str, Any] = {"kinds": list(f.kinds), "backends": list(f.backends), "levels": list(f.levels)}
    if f.statuses:
        d["statuses"] = list(f.statuses)
    return d


def to_proto_filter(f: CardFilter) -> pb.CardFilter:
    return pb.CardFilter(kinds=f.kinds, backends=f.backends, levels=f.levels, statuses=f.statuses)


def from_proto_search(req: pb.SearchRequest) -> SearchQuery:
    return validate(SearchQuery, {"text": req.text, "top_k": req.top_k or 5, "filter": from_proto_filter(req.filter),
                                  "mode": req.mode or "hybrid"})


def _symptoms(s: pb.Symptoms) -> dict[str, list[str]]:
    return {k: list(getattr(s, k)) for k in ("bottleneck_classes", "profile_signals", "ir_signatures", "code_features")}


def from_proto_quick_match(req: pb.QuickMatchRequest) -> QuickMatchQuery:
    return validate(QuickMatchQuery, {"symptoms": _symptoms(req.symptoms), "text": req.text,
                                      "backend": req.backend or "any", "top_k": req.top_k or 3,
                                      "exclude": list(req.exclude)})


def from_proto_invariant_query(req: pb.GetInvariantsRequest) -> InvariantQuery:
    return validate(InvariantQuery, {"pass_names": list(req.pass_names), "ir_signatures": list(req.ir_signatures),
                                     "backend": req.backend or "any", "text": req.text, "top_k": req.top_k or 5})


# ---------------------------------------------------------------- results
def _breakdown(b: ScoreBreakdown) -> pb.ScoreBreakdown:
    return pb.ScoreBreakdown(dense=b.dense, bm25=b.bm25, symptom=b.symptom, dense_rank=b.dense_rank or 0,
                             bm25_rank=b.bm25_rank or 0, matched_symptoms=b.matched_symptoms)


def to_proto_hits(hits: list[SearchHit]) -> pb.SearchResponse:
    return pb.SearchResponse(hits=[pb.SearchHit(card=to_proto_card(h.card), score=h.score,
                                                breakdown=_breakdown(h.breakdown)) for h in hits])


def from_proto_hits(resp: pb.SearchResponse) -> list[SearchHit]:
    out = []
    for h in resp.hits:
        b = h.breakdown
        out.append(SearchHit(card=from_proto_card(h.card), score=h.score, breakdown=ScoreBreakdown(
            dense=b.dense, bm25=b.bm25, symptom=b.symptom, dense_rank=b.dense_rank or None,
            bm25_rank=b.bm25_rank or None, matched_symptoms=list(b.matched_symptoms))))
    return out


def to_proto_page(page: CardPage) -> pb.ListCardsResponse:
    return pb.ListCardsResponse(cards=[to_proto_card(c) for c in page.cards], next_cursor=page.next_cursor,
                                total=page.total)


def from_proto_page(resp: pb.ListCardsResponse) -> CardPage:
    return CardPage(cards=[from_proto_card(c) for c in resp.cards], next_cursor=resp.next_cursor, total=resp.total)


# ---------------------------------------------------------------- synthesis: trajectories
def _json_object(raw: str, field: str, limits: Limits) -> dict[str, Any]:
    check_json(raw, limits, field)  # before the parser recurses into a deep document
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, or a 5000-digit integer (int_max_str_digits)
        raise InvalidArgument(f"not valid JSON: {e}", field=field) from e
    if not isinstance(data, dict):
        raise InvalidArgument("must be a JSON object", field=field)
    return data


def from_json_trajectory(raw: str, limits: Limits | None = None, field: str = "trajectory_json") -> Trajectory:
    """A trajectory from its JSON text, checked against ``limits`` and the model (errors name ``field.<path>``)."""
    return validate(Trajectory, _json_object(raw, field, limits or Limits()), field)


def from_proto_trajectory(req: pb.SubmitTrajectoryRequest, limits: Limits | None = None) -> Trajectory:
    return from_json_trajectory(req.trajectory_json, limits)


def to_proto_trajectory(trajectory: Trajectory) -> pb.SubmitTrajectoryRequest:
    return pb.SubmitTrajectoryRequest(trajectory_json=trajectory.model_dump_json())


# ---------------------------------------------------------------- synthesis: jobs
def to_proto_job(doc: dict[str, Any]) -> pb.JobStatus:
    """A job record (``synthesis.curation.Curator.job``) as JobStatus; ``result`` is set once the run is done."""
    msg = pb.JobStatus(job_id=doc["job_id"], state=doc["state"], done=int(doc.get("done", 0)),
                       total=int(doc.get("total", 0)), message=doc.get("message", ""))
    if doc.get("result"):
        result = dict(doc["result"])
        new = int(result.pop("new_proposals", 0))
        report = SynthesisReport.model_validate(result).model_dump()
        msg.result.CopyFrom(pb.SynthesisReport(**report, new_proposals=new))
    return msg


def from_proto_job_result(msg: pb.JobStatus) -> tuple[SynthesisReport, int]:
    """The report of a finished job and how many proposals it queued (an empty report while it runs)."""
    r = msg.result
    report = validate(SynthesisReport, {
        "trajectories": r.trajectories, "rounds": r.rounds, "categories": dict(r.categories), "mapped": r.mapped,
        "unmatched": r.unmatched, "proposals": dict(r.proposals), "excluded": dict(r.excluded),
        "pending_rounds": list(r.pending_rounds), "polished": r.polished, "duration_s": r.duration_s,
        "rounds_per_min": r.rounds_per_min}, "result")
    return report, r.new_proposals


# ---------------------------------------------------------------- synthesis: proposals and review
def _timestamp(dt: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc))
    return ts


def _optional(msg: Any, name: str) -> Any:
    return getattr(msg, name) if msg.HasField(name) else None


def _components(c: MappingComponents) -> pb.MappingComponents:
    return pb.MappingComponents(**c.model_dump())


def to_proto_cause(c: CauseRecord) -> pb.Cause:
    return pb.Cause(
        id=c.id, title=c.title, description=c.description, bottleneck_class=c.bottleneck_class,
        families=c.families, explains=c.explains, status=c.status, version=c.version,
        provenance=pb.Provenance(origin=c.provenance.origin, rounds=c.provenance.rounds,
                                 author=c.provenance.author or ""),
        evidence=[pb.Evidence(kind=e.kind, text=e.text, source=e.source or "", metric=e.metric) for e in c.evidence])


def from_proto_cause(msg: pb.Cause, prefix: str = "cause") -> CauseRecord:
    return validate(CauseRecord, {
        "id": msg.id, "title": msg.title, "description": msg.description,
        "bottleneck_class": msg.bottleneck_class or "unknown", "families": list(msg.families),
        "explains": list(msg.explains), "status": msg.status or "proposed", "version": msg.version or 1,
        "provenance": {"origin": msg.provenance.origin or "curated", "rounds": list(msg.provenance.rounds),
                       "author": msg.provenance.author or None},
        "evidence": [{"kind": e.kind, "text": e.text, "source": e.source or None, "metric": dict(e.metric)}
                     for e in msg.evidence]}, prefix)


def to_proto_causes(causes: list[CauseRecord]) -> pb.ListCausesResponse:
    return pb.ListCausesResponse(causes=[to_proto_cause(c) for c in causes])


def from_proto_causes(resp: pb.ListCausesResponse) -> list[CauseRecord]:
    return [from_proto_cause(c, f"causes.{i}") for i, c in enumerate(resp.causes)]


def to_proto_proposal(p: Proposal) -> pb.Proposal:
    msg = pb.Proposal(
        id=p.id, kind=p.kind, status=p.status, card=to_proto_card(p.card), target_family=p.target_family,
        base_version=p.base_version, confidence=p.confidence,
        evidence=[pb.EvidenceRef(**e.model_dump()) for e in p.evidence],
        nearest=[pb.FamilyCandidate(family_id=c.family_id, score=c.score, components=_components(c.components))
                 for c in p.nearest],
        reason=p.reason, created_at=_timestamp(p.created_at), author=p.author, polished=p.polished,
        reviewer=p.reviewer, reviewer_notes=p.reviewer_notes)
    if p.reviewed_at is not None:
        msg.reviewed_at.CopyFrom(_timestamp(p.reviewed_at))
    if p.cause is not None:
        msg.cause.CopyFrom(to_proto_cause(p.cause))
    return msg


def _evidence_ref(e: pb.EvidenceRef) -> dict[str, Any]:
    return {"round_ref": e.round_ref, "problem": e.problem, "backend": e.backend, "outcome": e.outcome,
            "speedup": _optional(e, "speedup"), "lift": _optional(e, "lift"),
            "confidence": _optional(e, "confidence"), "note": e.note, "copies": e.copies or 1}


def _candidate(c: pb.FamilyCandidate) -> dict[str, Any]:
    m = c.components
    return {"family_id": c.family_id, "score": c.score,
            "components": {"dense": m.dense, **{k: _optional(m, k) for k in ("symptoms", "levels", "cited")}}}


def from_proto_proposal(msg: pb.Proposal, prefix: str = "proposal") -> Proposal:
    if not msg.HasField("card"):
        raise InvalidArgument("a proposal carries its draft card", field=f"{prefix}.card")
    d: dict[str, Any] = {
        "id": msg.id, "kind": msg.kind, "status": msg.status or "pending",
        "card": from_proto_card(msg.card, f"{prefix}.card"), "target_family": _optional(msg, "target_family"),
        "base_version": _optional(msg, "base_version"), "confidence": msg.confidence,
        "evidence": [_evidence_ref(e) for e in msg.evidence], "nearest": [_candidate(c) for c in msg.nearest],
        "reason": msg.reason, "author": msg.author or "synthesis@offline", "polished": msg.polished,
        "reviewer": _optional(msg, "reviewer"), "reviewer_notes": msg.reviewer_notes,
        "reviewed_at": msg.reviewed_at.ToDatetime(tzinfo=timezone.utc) if msg.HasField("reviewed_at") else None,
        "cause": from_proto_cause(msg.cause, f"{prefix}.cause") if msg.HasField("cause") else None}
    if msg.HasField("created_at"):
        d["created_at"] = msg.created_at.ToDatetime(tzinfo=timezone.utc)
    return validate(Proposal, d, prefix)


def to_proto_review_item(proposal: Proposal, nearest: AnyCard | None = None) -> pb.ReviewItem:
    msg = pb.ReviewItem(proposal=to_proto_proposal(proposal))
    if nearest is not None:
        msg.nearest_card.CopyFrom(to_proto_card(nearest))
    return msg


def from_proto_review_item(msg: pb.ReviewItem) -> tuple[Proposal, AnyCard | None]:
    """The proposal and the existing family shown beside it (``None`` when there is none)."""
    near = from_proto_card(msg.nearest_card, "nearest_card") if msg.HasField("nearest_card") else None
    return from_proto_proposal(msg.proposal), near


def to_proto_review(proposal_id: str, action: str, *, reviewer: str, reason: str = "",
                    card: AnyCard | None = None, merge_into: str = "") -> pb.ReviewRequest:
    req = pb.ReviewRequest(proposal_id=proposal_id, action=action, reason=reason, merge_into=merge_into,
                           reviewer=reviewer)
    if card is not None:
        req.card.CopyFrom(to_proto_card(card))
    return req


def from_proto_review_card(req: pb.ReviewRequest) -> AnyCard | None:
    """The edited card of a ReviewRequest (``None`` when the request carries none)."""
    return from_proto_card(req.card, "card") if req.HasField("card") else None
