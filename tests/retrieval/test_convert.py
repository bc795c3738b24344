"""Every packaged card survives pydantic -> proto -> pydantic unchanged; local and gRPC clients agree."""

from __future__ import annotations

from functools import cache

from kb.cardfiles import load_dir
from kb.models.cards import Symptoms
from kb.models.search import CardFilter, QuickMatchQuery, SearchQuery
from retrieval.convert import from_proto_card, to_proto_card


def test_card_round_trip_for_every_packaged_card():
    for card in load_dir():
        assert from_proto_card(to_proto_card(card)) == card, card.id


def test_local_and_grpc_clients_are_congruent(server):
    from retrieval.client import GrpcKBClient, LocalKBClient

    local = LocalKBClient(kb=server.kb)
    with GrpcKBClient(f"127.0.0.1:{server.port}") as remote:
        for q in (SearchQuery(text="why does argmax scalarize on Ascend"),
                  SearchQuery(text="layout conversion", filter=CardFilter(kinds=["invariant"]), mode="bm25")):
            assert [h.card.id for h in local.search(q)] == [h.card.id for h in remote.search(q)]
        qm = QuickMatchQuery(symptoms=Symptoms(code_features=["tl.argmax"]))
        assert [h.card for h in local.quick_match(qm)] == [h.card for h in remote.quick_match(qm)]
        assert local.get_card("top2-pairwise-max") == remote.get_card("top2-pairwise-max")


# ---------------------------------------------------------------- SynthesisService messages
@cache
def _proposals():
    from datetime import datetime, timezone

    from synthesis.models import EvidenceRef, FamilyCandidate, MappingComponents, Proposal

    cards = {c.kind: c for c in load_dir()}  # one packaged card of each kind as the draft
    at = datetime(2026, 12, 1, 9, 30, 15, 123456, tzinfo=timezone.utc)
    full = Proposal(
        id="example.rows-per-program.0001", kind="example", status="approved", card=cards["pattern"],
        target_family="rows-per-program", base_version=3, confidence=0.82,
        evidence=[EvidenceRef(round_ref="t1#2", problem="softmax", backend="cuda", outcome="improved", speedup=2.4,
                              lift=1.3, confidence=0.9, note="8 rows per program", copies=3),
                  EvidenceRef(round_ref="t2#1")],
        nearest=[FamilyCandidate(family_id="rows-per-program", score=0.77,
                                 components=MappingComponents(dense=0.8, symptoms=0.5, levels=None, cited=1.0))],
        reason="same rewrite", created_at=at, author="synthesis@offline", polished=True, reviewer="ana",
        reviewer_notes="fine", reviewed_at=at)
    minimal = [Proposal(id=f"new-family.{c.id}.0001", kind="new_family", card=c, confidence=0.0, created_at=at)
               for c in cards.values()]
    return [full, *minimal]


def test_proposal_round_trip_keeps_every_field():
    from retrieval.convert import from_proto_proposal, to_proto_proposal

    for p in _proposals():
        msg = to_proto_proposal(p)
        assert from_proto_proposal(msg) == p, p.id
        assert from_proto_proposal(type(msg).FromString(msg.SerializeToString())) == p  # through the wire bytes
    full = to_proto_proposal(_proposals()[0])
    assert full.card.id and full.nearest[0].components.HasField("symptoms")
    assert not full.nearest[0].components.HasField("levels")  # None stays unset, not 0.0
    assert not to_proto_proposal(_proposals()[1]).HasField("reviewed_at")


def test_review_item_and_request_round_trip():
    from retrieval.convert import from_proto_review_card, from_proto_review_item, to_proto_review, to_proto_review_item

    p, *_ = _proposals()
    near = _proposals()[-1].card
    assert from_proto_review_item(to_proto_review_item(p, near)) == (p, near)
    assert from_proto_review_item(to_proto_review_item(p)) == (p, None)
    req = to_proto_review("", "edit", reviewer="ana", reason="typo", card=near)
    assert (req.action, req.reviewer, req.proposal_id) == ("edit", "ana", "")
    assert from_proto_review_card(req) == near
    assert from_proto_review_card(to_proto_review("x.y.z", "approve", reviewer="ana")) is None


def test_job_result_round_trip():
    from retrieval.convert import from_proto_job_result, to_proto_job
    from synthesis.models import SynthesisReport

    report = SynthesisReport(trajectories=2, rounds=9, categories={"improved": 4, "failed": 1}, mapped=3, unmatched=2,
                             proposals={"example": 2}, excluded={"t1#4": "hack: caches_results"},
                             pending_rounds=["t2#3"], polished=1, duration_s=1.25, rounds_per_min=432.0)
    doc = {"job_id": "syn-1", "state": "done", "done": 2, "total": 2, "message": "done",
           "result": report.model_dump(mode="json") | {"new_proposals": 3}}
    msg = to_proto_job(doc)
    assert (msg.job_id, msg.state, msg.result.new_proposals) == ("syn-1", "done", 3)
    assert from_proto_job_result(msg) == (report, 3)
    running = to_proto_job({"job_id": "syn-2", "state": "running", "done": 1, "total": 4, "message": "mining 1/4"})
    assert not running.HasField("result") and from_proto_job_result(running) == (SynthesisReport(), 0)


def test_bad_proposal_and_trajectory_fields_are_named():
    import json

    import pytest

    from kb.errors import InvalidArgument
    from kb.models import ProblemRef, Trajectory
    from retrieval.convert import from_json_trajectory, from_proto_proposal, to_proto_proposal, to_proto_trajectory

    msg = to_proto_proposal(_proposals()[0])
    msg.evidence[0].copies = -2
    with pytest.raises(InvalidArgument) as e:
        from_proto_proposal(msg)
    assert e.value.field == "proposal.evidence.0.copies"
    msg.ClearField("card")
    with pytest.raises(InvalidArgument) as e:
        from_proto_proposal(msg)
    assert e.value.field == "proposal.card"

    t = Trajectory(id="traj-conv-1", problem=ProblemRef(name="p"), backend="interpreter")
    assert from_json_trajectory(to_proto_trajectory(t).trajectory_json) == t
    doc = json.loads(t.model_dump_json()) | {"best_ms": "quick"}
    for raw, field in ((json.dumps(doc), "trajectory_json.best_ms"), ("[1]", "trajectory_json"),
                       ("{", "trajectory_json")):
        with pytest.raises(InvalidArgument) as e:
            from_json_trajectory(raw)
        assert e.value.field == field, raw


def test_a_recipe_param_that_json_cannot_hold_is_an_invalid_argument_naming_it():
    import math

    import pytest

    from kb.errors import InvalidArgument

    card = next(c for c in load_dir() if c.kind == "pattern" and c.rewrite and c.rewrite.recipe)
    for bad in (math.inf, -math.inf, math.nan):  # the fuzzer found Infinity answered INTERNAL
        msg = to_proto_card(card)
        msg.rewrite.recipe.params["block"] = bad
        with pytest.raises(InvalidArgument, match="finite numbers") as e:
            from_proto_card(msg)
        assert e.value.field == "card.rewrite.recipe.params"
