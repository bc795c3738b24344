"""SynthesisService end to end over gRPC: submit, background synthesis job, proposals, review decisions."""

from __future__ import annotations

import json
import time

import grpc
import pytest

from kb.models import (EvidenceItem, ProblemRef, Round, RoundRewrite, Timing, TimingProtocol, Trajectory,
                       Validation)
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

CONTRIB = (("authorization", "Bearer contrib-token-0123456789"),)
REVIEW = (("authorization", "Bearer review-token-0123456789"),)


def _round(i: int, hyp: str, rewrite: str, family: str, speedup: float, hack: list[str] | None = None) -> Round:
    return Round(index=i, levels_reached=["L1", "L2"], hypothesis=hyp, cards_cited=[family] if family else [],
                 evidence=[EvidenceItem(level="L2", kind="timing", summary="grid of 65536 tiny programs")],
                 rewrite=RoundRewrite(family=family or "new", description=rewrite),
                 validation=Validation(passed=not hack, hack_flags=hack or []),
                 timing=Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=speedup),
                 outcome="failed" if hack else ("improved" if speedup > 1.03 else "regressed"))


def _traj(tid: str) -> Trajectory:
    base = Round(index=0, outcome="baseline", validation=Validation(passed=True),
                 timing=Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=1.0))
    # each trajectory its own problem: copies of one content would count once (issue 17)
    return Trajectory(id=tid, problem=ProblemRef(name=f"softmax_rows_{tid}"), backend="cuda", rounds=[
        base,
        _round(1, "Each program handles one short row; launch-bound grid",
               "Process 8 rows per program with a ROWS_PER_PROGRAM constexpr loop", "rows-per-program", 2.4),
        _round(2, "Swap the exp for a lookup table computed on the host",
               "Precompute exp table on host and gather from it", "", 1.9),
        _round(3, "Swap the exp for a lookup table in shared memory",
               "Precompute an exp lookup table and gather from it per element", "", 1.7),
        _round(4, "Cache the output between calls", "Return the cached tensor when inputs repeat", "", 50.0,
               hack=["caches_results"]),
    ])


@pytest.fixture(scope="module")
def synth(server):
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield pb_grpc.SynthesisServiceStub(ch)
    ch.close()


def _run_job(synth) -> dict:
    job = synth.RunSynthesis(pb.RunSynthesisRequest(only_new=True), metadata=REVIEW)
    assert job.state in ("queued", "running", "done")
    for _ in range(600):
        job = synth.GetJob(pb.GetJobRequest(job_id=job.job_id))
        if job.state in ("done", "failed"):
            break
        time.sleep(0.1)
    assert job.state == "done", job.message
    assert job.HasField("result")
    return job.result


def test_synthesis_job_and_review_flow(synth, server):
    for k in range(2):
        synth.SubmitTrajectory(pb.SubmitTrajectoryRequest(trajectory_json=_traj(f"syn-t{k}").model_dump_json()),
                               metadata=CONTRIB)
    with pytest.raises(grpc.RpcError) as e:
        synth.RunSynthesis(pb.RunSynthesisRequest(), metadata=CONTRIB)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    report = _run_job(synth)
    assert report.trajectories >= 2 and "caches_results" in json.dumps(dict(report.excluded))
    assert report.new_proposals >= 1
    props = list(synth.ListProposals(pb.ListProposalsRequest(status="pending")).proposals)
    assert props, "synthesis produced no proposals"
    # every field is typed on the wire (grpcurl shows it): the draft card is a Card message, not a JSON string
    assert all(p.card.id and p.card.kind and p.HasField("created_at") for p in props)
    # hack-tripped rounds are never mined into patterns
    assert not any("#4" in e.round_ref for p in props if p.kind != "anti_signal" for e in p.evidence)
    kinds = {p.kind for p in props}
    assert "example" in kinds
    example = next(p for p in props if p.kind == "example")
    shown = synth.GetProposal(pb.GetProposalRequest(proposal_id=example.id))
    assert shown.proposal == example
    assert shown.nearest_card.id == example.target_family

    with pytest.raises(grpc.RpcError) as e:
        synth.Review(pb.ReviewRequest(proposal_id=example.id, action="reject"), metadata=REVIEW)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(e.value.trailing_metadata())["ladder-error-field"] == "reason"

    before = server.kb.get_card(example.target_family).version
    done = synth.Review(pb.ReviewRequest(proposal_id=example.id, action="approve", reviewer="ana"),
                        metadata=REVIEW).proposal
    assert done.status == "approved" and done.reviewer == "ana" and done.HasField("reviewed_at")
    after = server.kb.get_card(example.target_family)
    assert after.version == before + 1 and after.status == "active"
    with pytest.raises(grpc.RpcError) as e:  # a decided proposal cannot be decided again
        synth.Review(pb.ReviewRequest(proposal_id=example.id, action="approve"), metadata=REVIEW)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    new_fams = [p for p in props if p.kind == "new_family"]
    if new_fams:
        nf = new_fams[0]
        synth.Review(pb.ReviewRequest(proposal_id=nf.id, action="approve"), metadata=REVIEW)
        from kb.models.search import QuickMatchQuery

        hits = server.kb.quick_match(QuickMatchQuery(text=nf.card.title, top_k=5))
        assert nf.card.id in [h.card.id for h in hits]  # served by quick-match without a restart


def test_review_rejects_bad_input(synth):
    with pytest.raises(grpc.RpcError) as e:
        synth.Review(pb.ReviewRequest(proposal_id="x", action="bless"), metadata=REVIEW)
    assert dict(e.value.trailing_metadata())["ladder-error-field"] == "action"
    with pytest.raises(grpc.RpcError) as e:
        synth.GetProposal(pb.GetProposalRequest(proposal_id="nope-nope"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def _edit_fails(synth, card: pb.Card, proposal_id: str = "") -> str:
    with pytest.raises(grpc.RpcError) as e:
        synth.Review(pb.ReviewRequest(proposal_id=proposal_id, action="edit", card=card, reason="fix"),
                     metadata=REVIEW)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return dict(e.value.trailing_metadata())["ladder-error-field"]


def test_a_bad_field_of_the_edited_card_is_invalid_argument_naming_it(synth, server):
    from retrieval import convert

    served = convert.to_proto_card(server.kb.get_card("rows-per-program"))
    bad = pb.Card()
    bad.CopyFrom(served)
    bad.ClearField("levels")
    bad.levels.append("L9")
    assert _edit_fails(synth, bad) == "card.levels.0"
    bad.CopyFrom(served)
    bad.kind = "recipe"
    assert _edit_fails(synth, bad) == "card.kind"
    bad.CopyFrom(served)
    bad.symptoms.ir_signatures.append("x" * 100_000)  # over the per-field card limit
    assert _edit_fails(synth, bad).startswith("card.symptoms")
    with pytest.raises(grpc.RpcError) as e:  # an edit without proposal_id needs the card itself
        synth.Review(pb.ReviewRequest(action="edit", reason="fix"), metadata=REVIEW)
    assert dict(e.value.trailing_metadata())["ladder-error-field"] == "proposal_id"


def test_a_trajectory_with_a_bad_field_is_invalid_argument_naming_its_path(synth):
    doc = json.loads(_traj("syn-bad-0").model_dump_json())
    doc["rounds"][1]["timing"]["geomean_speedup"] = "fast"
    with pytest.raises(grpc.RpcError) as e:
        synth.SubmitTrajectory(pb.SubmitTrajectoryRequest(trajectory_json=json.dumps(doc)), metadata=CONTRIB)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert dict(e.value.trailing_metadata())["ladder-error-field"] == "trajectory_json.rounds.1.timing.geomean_speedup"


def test_list_proposals_pages_stay_under_the_message_limit(synth, server):
    from kb.models import PatternCard
    from retrieval.client.review import connect_review
    from synthesis.models import Proposal

    limit = server.settings.max_message_bytes  # 256 KiB in this fixture
    ids = []
    for i in range(12):  # ~40 KB each: the queue is about twice the limit
        card = PatternCard(id=f"big-{i:02d}", title=f"Big draft {i}", summary="A draft with a very long body.",
                           body=f"detail {i} " * 4000, backends=["cuda"], levels=["L1"], status="proposed")
        p = Proposal(id=f"new-family.big-{i:02d}.0001", kind="new_family", card=card, confidence=0.5)
        server.kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
        ids.append(p.id)

    seen, pages, req = [], 0, pb.ListProposalsRequest(status="pending", page_size=500)
    while True:
        resp = synth.ListProposals(req)
        assert resp.ByteSize() <= limit
        seen += [p.id for p in resp.proposals]
        pages += 1
        if not resp.next_cursor:
            break
        req.cursor = resp.next_cursor
    assert pages >= 2
    assert [i for i in seen if i.startswith("new-family.big-")] == ids  # each once, in queue order
    assert len(seen) == len(set(seen))

    with connect_review(f"127.0.0.1:{server.port}") as q:  # the review client follows the pages itself
        assert [p.id for p in q.proposals("pending") if p.id in ids] == ids
