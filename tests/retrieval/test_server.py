"""Drive every RPC of a real server through the generated stubs."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kb.models import ProblemRef, Trajectory
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

CONTRIB = (("authorization", "Bearer contrib-token-0123456789"),)
REVIEW = (("authorization", "Bearer review-token-0123456789"),)


@pytest.fixture(scope="module")
def channel(server):
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield ch
    ch.close()


@pytest.fixture(scope="module")
def stub(channel):
    return pb_grpc.KnowledgeServiceStub(channel)


@pytest.fixture(scope="module")
def synth(channel):
    return pb_grpc.SynthesisServiceStub(channel)


def _new_card(cid: str, status: str = "") -> pb.Card:
    return pb.Card(id=cid, kind="pattern", title=f"Card {cid}", summary="A summary that is long enough.",
                   body="body", backends=["cuda"], levels=["L1"], sources=["https://example.org"],
                   rewrite=pb.Rewrite(description="rewrite it",
                                      recipe=pb.Recipe(kind="launch_params")), status=status)


def _field(err: grpc.RpcError) -> str:
    return dict(err.trailing_metadata() or ()).get("ladder-error-field", "")


def test_health_serving(channel):
    h = health_pb2_grpc.HealthStub(channel)
    for svc in ("", "ladder.v1.KnowledgeService", "ladder.v1.SynthesisService"):
        assert h.Check(health_pb2.HealthCheckRequest(service=svc)).status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_services(channel):
    r = reflection_pb2_grpc.ServerReflectionStub(channel)
    resp = next(r.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
    names = {s.name for s in resp.list_services_response.service}
    assert {"ladder.v1.KnowledgeService", "ladder.v1.SynthesisService", "grpc.health.v1.Health"} <= names


def test_search_quick_match_invariants(stub):
    hits = stub.Search(pb.SearchRequest(text="why does argmax scalarize on Ascend", top_k=3), timeout=30).hits
    assert hits[0].card.id == "ascend-argmax-max-with-index"
    assert hits[0].breakdown.dense > 0 and hits[0].breakdown.bm25 > 0
    qm = stub.QuickMatch(pb.QuickMatchRequest(symptoms=pb.Symptoms(code_features=["tl.argmax", "top-2"]),
                                              backend="ascend"), timeout=30).hits
    assert qm[0].card.id == "top2-pairwise-max" and qm[0].breakdown.symptom > 0
    inv = stub.GetInvariants(pb.GetInvariantsRequest(pass_names=["triton-to-linalg"], backend="ascend"), timeout=30).hits
    assert inv[0].card.kind == "invariant" and inv[0].card.invariant.passes


def test_get_card_and_paging(stub):
    c = stub.GetCard(pb.GetCardRequest(id="top2-pairwise-max"))
    assert c.kind == "pattern" and c.rewrite.description
    seen, cursor, total = [], "", None
    while True:
        page = stub.ListCards(pb.ListCardsRequest(page_size=5, cursor=cursor))
        seen += [x.id for x in page.cards]
        total = page.total
        cursor = page.next_cursor
        if not cursor:
            break
    assert len(seen) == len(set(seen)) == total


def test_writes_need_the_right_role(stub):
    with pytest.raises(grpc.RpcError) as e:
        stub.UpsertCard(pb.UpsertCardRequest(card=_new_card("w-anon")))
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as e:
        stub.UpsertCard(pb.UpsertCardRequest(card=_new_card("w-bad")), metadata=(("authorization", "Bearer nope"),))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as e:
        stub.SetCardStatus(pb.SetCardStatusRequest(id="top2-pairwise-max", status="deprecated"), metadata=CONTRIB)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "reviewer" in e.value.details() and "contrib-token-0123456789" not in e.value.details()


def test_contributor_proposes_reviewer_approves(stub):
    card = stub.UpsertCard(pb.UpsertCardRequest(card=_new_card("w-flow", status="active")), metadata=CONTRIB)
    assert card.status == "proposed" and card.version == 1  # contributors cannot self-activate
    approved = stub.SetCardStatus(pb.SetCardStatusRequest(id="w-flow", status="active", version=1), metadata=REVIEW)
    assert approved.status == "active"
    assert stub.GetCard(pb.GetCardRequest(id="w-flow")).status == "active"


@pytest.mark.parametrize("call,request_,field", [
    ("Search", pb.SearchRequest(text=""), "text"),
    ("Search", pb.SearchRequest(text="x", top_k=1000), "top_k"),
    ("Search", pb.SearchRequest(text="x", filter=pb.CardFilter(backends=["gpu"])), "filter.backends.0"),
    ("Search", pb.SearchRequest(text="x", mode="magic"), "mode"),
    ("QuickMatch", pb.QuickMatchRequest(symptoms=pb.Symptoms(ir_signatures=["nope"])), "symptoms.ir_signatures.0"),
    ("GetCard", pb.GetCardRequest(id=""), "id"),
    ("ListCards", pb.ListCardsRequest(cursor="garbage!"), "cursor"),
    ("ListCards", pb.ListCardsRequest(page_size=100000), "page_size"),
    ("GetInvariants", pb.GetInvariantsRequest(), "pass_names"),
])
def test_invalid_argument_names_the_field(stub, call, request_, field):
    with pytest.raises(grpc.RpcError) as e:
        getattr(stub, call)(request_)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _field(e.value) == field and field in e.value.details()


def test_invalid_card_write_names_the_field(stub):
    bad = _new_card("Bad Id!")
    with pytest.raises(grpc.RpcError) as e:
        stub.UpsertCard(pb.UpsertCardRequest(card=bad), metadata=CONTRIB)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and _field(e.value) == "card.id"
    with pytest.raises(grpc.RpcError) as e:
        stub.SetCardStatus(pb.SetCardStatusRequest(id="top2-pairwise-max", status="shiny"), metadata=REVIEW)
    assert _field(e.value) == "status"


def test_not_found(stub):
    with pytest.raises(grpc.RpcError) as e:
        stub.GetCard(pb.GetCardRequest(id="no-such-card"))
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_message_size_limit(stub):
    with pytest.raises(grpc.RpcError) as e:
        stub.Search(pb.SearchRequest(text="x" * (300 * 1024)))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_deadline_is_honoured(stub):
    with pytest.raises(grpc.RpcError) as e:
        stub.Search(pb.SearchRequest(text="deadline test query that is not cached"), timeout=0.000001)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_submit_trajectory_idempotent(synth):
    t = Trajectory(id="traj-rpc-1", problem=ProblemRef(name="p"), backend="interpreter")
    r1 = synth.SubmitTrajectory(pb.SubmitTrajectoryRequest(trajectory_json=t.model_dump_json()), metadata=CONTRIB)
    r2 = synth.SubmitTrajectory(pb.SubmitTrajectoryRequest(trajectory_json=t.model_dump_json()), metadata=CONTRIB)
    assert (r1.created, r2.created) == (True, False)
    with pytest.raises(grpc.RpcError) as e:
        synth.SubmitTrajectory(pb.SubmitTrajectoryRequest(trajectory_json='{"id": "x"}'), metadata=CONTRIB)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and _field(e.value).startswith("trajectory_json.")


def test_typed_client_maps_errors(server):
    from kb.errors import InvalidArgument, NotFound
    from kb.models.search import SearchQuery
    from retrieval.client import GrpcKBClient

    with GrpcKBClient(f"127.0.0.1:{server.port}") as c:
        hits = c.search(SearchQuery(text="why does argmax scalarize on Ascend"))
        assert hits[0].card.id == "ascend-argmax-max-with-index"
        with pytest.raises(NotFound):
            c.get_card("no-such-card")
        from retrieval.v1 import ladder_pb2 as pb2

        with pytest.raises(InvalidArgument) as e:
            c.call(c.knowledge.Search, pb2.SearchRequest(text=""))
        assert e.value.field == "text"
