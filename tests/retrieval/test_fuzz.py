"""Property-based fuzzing of every RPC against ONE real server (issue 8.1).

More than 10k generated requests (counted and asserted at the end): typed messages from ``fuzz_strategies``,
raw bytes that are not a valid message at all, and random bearer tokens. Properties: no INTERNAL or UNKNOWN
status, every INVALID_ARGUMENT / NOT_FOUND names the field in ``ladder-error-field``, and everything the
server acknowledged reads back afterwards (no poisoned card or trajectory in the store).
"""

from __future__ import annotations

import json
import string
import time
from collections import Counter
from typing import Any

import grpc
import pytest
from fuzz_strategies import (
    REQUESTS,
    TRAJECTORY_BASE,
    get_job_requests,
    get_proposal_requests,
    review_requests,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.errors import CODE_KEY, FIELD_KEY
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

pytestmark = pytest.mark.slow  # ~10k requests: 2-4 minutes on two shared cores (measured)

REVIEW = (("authorization", "Bearer review-token-0123456789"),)
FUZZ = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck), "print_blob": True}
KNOWLEDGE = ("Search", "QuickMatch", "GetCard", "ListCards", "GetInvariants", "UpsertCard", "SetCardStatus")
SYNTHESIS = ("SubmitTrajectory", "RunSynthesis", "GetJob", "ListProposals", "GetProposal", "Review")
#: requests per RPC; each hypothesis example is a batch of BATCH requests (generation dominates the cost)
BUDGET = {"Search": 1000, "QuickMatch": 1000, "GetCard": 1600, "ListCards": 1200, "GetInvariants": 700,
          "UpsertCard": 150, "SetCardStatus": 400, "SubmitTrajectory": 800, "ListProposals": 300}
BATCH = 10
MIN_TOTAL = 10_000
BAD = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}

SENT: Counter[str] = Counter()
CODES: Counter[str] = Counter()
OK: Counter[str] = Counter()
WHY: Counter[tuple[str, str, str]] = Counter()  # (rpc, status, field): printed at the end to tune the strategies
ACKED: dict[str, set[str]] = {"cards": set(), "trajectories": set(), "jobs": set()}


class Rpc:
    """Sends requests, counts them, and checks every rejection."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.k = pb_grpc.KnowledgeServiceStub(self.channel)
        self.s = pb_grpc.SynthesisServiceStub(self.channel)

    def send(self, name: str, request: Any, metadata: tuple[tuple[str, str], ...] = REVIEW) -> Any:
        stub = self.k if name in KNOWLEDGE else self.s
        SENT[name] += 1
        try:
            resp = getattr(stub, name)(request, metadata=metadata, timeout=120)
        except grpc.RpcError as e:
            check_rejection(name, request, e)
            return None
        CODES["OK"] += 1
        OK[name] += 1
        if name == "UpsertCard":
            ACKED["cards"].add(resp.id)
        elif name == "SubmitTrajectory":
            ACKED["trajectories"].add(resp.trajectory_id)
        elif name == "RunSynthesis":
            ACKED["jobs"].add(resp.job_id)
        return resp

    def raw(self, method: str, body: bytes, metadata: tuple[tuple[str, str], ...] = REVIEW) -> None:
        SENT["raw"] += 1
        call = self.channel.unary_unary(method)  # no serializer: the body goes out as given
        try:
            call(body, metadata=metadata, timeout=120)
            CODES["OK"] += 1
        except grpc.RpcError as e:
            check_rejection(method, body, e)


def check_rejection(name: str, request: Any, e: grpc.RpcError) -> None:
    code = e.code()
    CODES[code.name] += 1
    shown = str(request)[:1500]
    assert code not in BAD, f"{name} -> {code.name}: {e.details()}\nrequest: {shown}"
    meta = dict(e.trailing_metadata() or ())
    WHY[(name, code.name, meta.get(FIELD_KEY, ""))] += 1
    if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND):
        field = meta.get(FIELD_KEY, "")
        assert field, f"{name} -> {code.name} without {FIELD_KEY}: {e.details()}\nrequest: {shown}"
        assert meta.get(CODE_KEY), f"{name} -> {code.name} without {CODE_KEY}"
        assert e.details().startswith(field), f"{name}: the message {e.details()!r} does not name {field!r}"


@pytest.fixture(scope="module")
def rpc(server):
    r = Rpc(server.port)
    yield r
    r.channel.close()


def fuzz(rpc: Rpc, name: str, strategy: st.SearchStrategy[Any], n: int) -> None:
    """Send about ``n`` generated requests (fewer only where hypothesis exhausts a tiny space)."""

    @settings(max_examples=max(1, n // BATCH), **FUZZ)
    @given(st.lists(strategy, min_size=BATCH, max_size=BATCH))
    def run(requests: list[Any]) -> None:
        for request in requests:
            rpc.send(name, request)

    run()


def wait_jobs(server, timeout: float = 300) -> list[dict[str, Any]]:
    """Wait until no synthesis job is queued or running (raw-bytes fuzz can start jobs too); return all jobs."""
    deadline = time.monotonic() + timeout
    while True:
        jobs = server.kb.store.list_jobs()
        if all(j["state"] in ("done", "failed") for j in jobs) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.2)


@pytest.fixture(scope="module")
def proposals(rpc: Rpc, server) -> tuple[list[str], list[pb.Card]]:
    """Real proposals to aim Review at: submit a few trajectories and run one synthesis job."""
    for k, family in enumerate(("rows-per-program", "rows-per-program", "brand-new-lookup-table")):
        doc = json.loads(json.dumps(TRAJECTORY_BASE))
        doc["id"] = f"fz-seed-{k}"
        doc["rounds"][0]["rewrite"]["family"] = family
        doc["rounds"][0]["hypothesis"] += f" variant {k}"
        rpc.send("SubmitTrajectory", pb.SubmitTrajectoryRequest(trajectory_json=json.dumps(doc)))
    rpc.send("RunSynthesis", pb.RunSynthesisRequest(only_new=True))
    assert all(j["state"] == "done" for j in wait_jobs(server)), "seed synthesis job failed"
    props = list(rpc.s.ListProposals(pb.ListProposalsRequest()).proposals)
    assert props, "seed synthesis produced no proposal to review"
    return [p.id for p in props], [p.card for p in props]


@pytest.mark.parametrize("name", list(BUDGET))
def test_fuzz_rpc(rpc: Rpc, proposals, name: str):
    fuzz(rpc, name, REQUESTS[name], BUDGET[name])
    assert SENT[name] > 0


def test_fuzz_synthesis_jobs(rpc: Rpc, server, proposals):
    rpc.send("RunSynthesis", pb.RunSynthesisRequest(only_new=False))
    fuzz(rpc, "GetJob", get_job_requests(sorted(ACKED["jobs"])), 600)
    assert all(j["state"] == "done" for j in wait_jobs(server))


def test_fuzz_review(rpc: Rpc, proposals):
    ids, cards = proposals
    fuzz(rpc, "GetProposal", get_proposal_requests(ids), 600)
    fuzz(rpc, "Review", review_requests(ids, cards), 300)


@pytest.mark.parametrize("service,names", [("ladder.v1.KnowledgeService", KNOWLEDGE),
                                           ("ladder.v1.SynthesisService", SYNTHESIS)])
def test_fuzz_raw_bytes(rpc: Rpc, service: str, names: tuple[str, ...]):
    """Bodies that are not a valid message (bad wire types, invalid UTF-8 in string fields) are rejected cleanly."""
    bodies = st.one_of(st.binary(max_size=200), st.sampled_from([b"\x0a\x02\xff\xfe", b"\x0a\x80", b"\xff" * 9,
                                                                  b"\x12\x05\x0a\x03\xc3\x28\x00"]))

    @settings(max_examples=700 // BATCH, **FUZZ)
    @given(st.lists(st.tuples(st.sampled_from(names), bodies), min_size=BATCH, max_size=BATCH))
    def run(calls: list[tuple[str, bytes]]) -> None:
        for name, body in calls:
            rpc.raw(f"/{service}/{name}", body)

    run()


def test_fuzz_bearer_tokens(rpc: Rpc):
    """Random tokens and malformed authorization headers: UNAUTHENTICATED / PERMISSION_DENIED, never a crash."""
    tokens = st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " ", max_size=80)
    headers = st.one_of(tokens.map(lambda t: "Bearer " + t), tokens, st.just("Bearer "), st.just("bearer review-token-0123456789"))
    writes = st.sampled_from(["UpsertCard", "SetCardStatus", "SubmitTrajectory", "RunSynthesis", "Review"])

    @settings(max_examples=600 // BATCH, **FUZZ)
    @given(st.lists(st.tuples(writes, headers), min_size=BATCH, max_size=BATCH))
    def run(calls: list[tuple[str, str]]) -> None:
        for name, header in calls:
            rpc.send(name, getattr(pb, f"{name}Request")(), metadata=(("authorization", header),))

    run()


def test_acknowledged_writes_read_back(rpc: Rpc, server):
    """Nothing the fuzz got acknowledged poisoned the store: every card, trajectory and job reads back."""
    assert ACKED["cards"] and ACKED["trajectories"], "the fuzz never got a write through; strategies too hostile"
    for cid in sorted(ACKED["cards"]):
        assert rpc.k.GetCard(pb.GetCardRequest(id=cid), timeout=30).id == cid
    cursor, seen = "", 0
    while True:
        page = rpc.k.ListCards(pb.ListCardsRequest(page_size=500, cursor=cursor,
                                                   filter=pb.CardFilter(statuses=["active", "proposed", "draft",
                                                                                   "rejected", "deprecated"])))
        seen += len(page.cards)
        cursor = page.next_cursor
        if not cursor:
            break
    assert seen == len(server.kb.store.served_cards())
    stored = {t.id for t in server.kb.store.trajectories()}
    assert ACKED["trajectories"] <= stored
    server.kb.store.check()
    failed = [(j["job_id"], j.get("message")) for j in wait_jobs(server) if j["state"] != "done"]
    assert not failed, f"synthesis jobs failed: {failed}"


def test_total_requests():
    """Runs last (file order): the whole fuzz sent at least MIN_TOTAL requests to the one server."""
    assert set(KNOWLEDGE) | set(SYNTHESIS) <= set(SENT), f"not every RPC was fuzzed: {sorted(SENT)}"
    total = sum(SENT.values())
    print(f"\nfuzz: {total} requests; outcomes {dict(CODES)}; accepted per RPC {dict(OK)}")
    print("most frequent rejections:", WHY.most_common(40))
    assert total >= MIN_TOTAL, f"only {total} requests were sent"
