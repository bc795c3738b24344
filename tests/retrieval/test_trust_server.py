"""Attacks on a real loopback server (issue 17): deep JSON, megabyte card bodies, a self-declared reviewer, a bug
in domain code, and hostile Content-Length headers on the review page. Each is a bounded loop."""

from __future__ import annotations

import logging
import shutil
import socket
import time

import grpc
import pytest

from kb.settings import Settings
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc
from synthesis.models import Proposal

TOKENS = {"contrib-token-0123456789": ["contributor"], "review-token-0123456789": {"name": "ana", "roles": ["reviewer"]}}
CONTRIB = (("authorization", "Bearer contrib-token-0123456789"),)
REVIEW = (("authorization", "Bearer review-token-0123456789"),)
BIG = 3_900_000


@pytest.fixture(scope="module")
def srv(tmp_path_factory, seeded_home, embedder):
    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("trust") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0)  # the default 4 MiB message limit
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0",
                           web_port=0)
    assert handle.wait_ready(60)
    opts = [("grpc.max_send_message_length", 8 << 20), ("grpc.max_receive_message_length", 8 << 20)]
    ch = grpc.insecure_channel(f"127.0.0.1:{handle.port}", opts)
    handle.stubs = pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)
    yield handle
    ch.close()
    handle.stop(0)


def _fails(call, req, metadata=CONTRIB):
    with pytest.raises(grpc.RpcError) as e:
        call(req, metadata=metadata, timeout=120)
    return e.value.code(), dict(e.value.trailing_metadata() or ()), e.value.details()


def test_a_trajectory_nested_100k_levels_is_invalid_argument_naming_the_field(srv, caplog):
    caplog.set_level(logging.INFO)
    deep = '{"id": "deep-001", "problem": {"name": "x", "cases": [' + "[" * 100_000 + "]" * 100_000 + "]}}"
    code, meta, details = _fails(srv.stubs[1].SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json=deep))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and meta["ladder-error-field"] == "trajectory_json"
    assert "levels deep" in details
    assert "RecursionError" not in caplog.text and "Traceback" not in caplog.text


def test_json_the_parser_refuses_is_invalid_argument_not_internal(srv):
    huge_int = '{"id": "int-0001", "problem": {"name": "x"}, "backend": "cuda", "initial_ms": ' + "9" * 5000 + "}"
    code, meta, _ = _fails(srv.stubs[1].SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json=huge_int))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and meta["ladder-error-field"] == "trajectory_json"


def test_ten_4mb_card_bodies_are_refused_and_never_stored(srv):
    k = srv.stubs[0]
    for i in range(10):
        card = pb.Card(id=f"huge-{i}", kind="pattern", title="Huge card", summary="A contributor card with a huge body.",
                       body="y" * BIG, backends=["cuda"], levels=["L1"])
        code, meta, _ = _fails(k.UpsertCard, pb.UpsertCardRequest(card=card))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and meta["ladder-error-field"] == "card.body"
    assert not [c for c in srv.kb.store.served_cards() if c.id.startswith("huge-")]
    hits = k.Search(pb.SearchRequest(text="rows per program", top_k=3), timeout=60).hits
    assert hits  # searches still answer


def test_the_reviewer_is_the_token_not_the_request(srv):
    from kb.models import PatternCard

    card = PatternCard(id="trust-review-card", title="Trust review card", status="proposed", backends=["cuda"],
                       summary="A new family drafted for the reviewer identity test.", levels=["L1"])
    p = Proposal(id="new-family.trust-review-card.0001", kind="new_family", card=card, confidence=0.7)
    srv.kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    resp = srv.stubs[1].Review(pb.ReviewRequest(proposal_id=p.id, action="approve", reviewer="someone-else"),
                               metadata=REVIEW, timeout=60)
    assert resp.proposal.reviewer == "ana"
    assert srv.curator.proposal(p.id).reviewer == "ana"


def test_a_bug_in_domain_code_is_internal_with_an_id_not_the_callers_fault(srv, monkeypatch, caplog):
    caplog.set_level(logging.ERROR)

    def broken(query):
        raise ValueError("a bug deep in the search engine")

    monkeypatch.setattr(srv.kb, "search", broken)
    code, meta, details = _fails(srv.stubs[0].Search, pb.SearchRequest(text="anything"), metadata=())
    assert code == grpc.StatusCode.INTERNAL and meta["ladder-error-code"] == "internal"
    error_id = meta["ladder-error-id"]
    assert error_id in details and "a bug deep" not in details  # no internals to the caller
    assert error_id in caplog.text and "ValueError: a bug deep in the search engine" in caplog.text
    assert "Traceback" in caplog.text  # the traceback is logged under that id


def test_declared_client_errors_keep_their_status(srv):
    code, meta, _ = _fails(srv.stubs[0].GetCard, pb.GetCardRequest(id="no-such-card"), metadata=())
    assert code == grpc.StatusCode.NOT_FOUND and meta["ladder-error-field"] == "id"
    code, _, _ = _fails(srv.stubs[0].ListCards, pb.ListCardsRequest(cursor="garbage"), metadata=())
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def _raw_post(port: int, length: str, body: bytes = b"") -> tuple[bytes, float]:
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n"
                  "Content-Type: application/x-www-form-urlencoded\r\n\r\n".encode() + body)
        return s.recv(4096), time.monotonic() - t0  # the socket stays open: the server must not wait for EOF


@pytest.mark.parametrize("length", ["-1", "abc", " 1e3"])
def test_the_review_page_answers_a_bad_content_length_at_once(srv, length, caplog):
    caplog.set_level(logging.DEBUG)
    head, took = _raw_post(srv.web.port, length)
    assert head.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), head[:80]
    assert took < 9 and "Traceback" not in caplog.text


def test_the_web_sign_in_binds_the_name_to_the_token(srv):
    from http.client import HTTPConnection
    from urllib.parse import urlencode

    def req(method: str, path: str, body: dict | None = None, cookie: str = ""):
        c = HTTPConnection("127.0.0.1", srv.web.port, timeout=30)
        h = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        c.request(method, path, body=urlencode(body) if body else None, headers=h)
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        return r, text

    r, page = req("GET", "/login")
    assert 'name="name"' not in page  # no free-text reviewer name any more
    pre = r.headers["Set-Cookie"].split(";")[0]
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    r, _ = req("POST", "/login", {"csrf": csrf, "token": "review-token-0123456789", "name": "mallory"}, cookie=pre)
    assert r.status == 303
    session = r.headers.get_all("Set-Cookie")[0].split(";")[0]
    _, queue = req("GET", "/queue", cookie=session)
    assert "ana" in queue and "mallory" not in queue
