"""Issue 32, item 3 over the wire: an UpsertCard over the whole-card or list cap is INVALID_ARGUMENT naming the
field (trailing metadata ``ladder-error-field``)."""

from __future__ import annotations

import grpc
import pytest

from retrieval import convert
from retrieval.errors import FIELD_KEY
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

TOKENS = {"contrib-token-0123456789": ["contributor"]}

CONTRIB = (("authorization", f"Bearer {next(iter(TOKENS))}"),)


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_home, embedder):
    """A server whose whole-card cap (64 KiB) is under its message limit (4 MiB), so the card cap decides."""
    import shutil

    from kb.service import KnowledgeBase
    from kb.settings import Settings
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("bounds") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0, max_card_bytes=64 * 1024)
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0")
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)


def _upsert(server, **kw):
    from kb.models import PatternCard

    card = PatternCard(id="bounded-card", title="Bounded card", summary="A card that walks around the caps.",
                       backends=["cuda"], levels=["L1"], **kw)
    with grpc.insecure_channel(f"127.0.0.1:{server.port}",
                               options=[("grpc.max_send_message_length", 8 << 20)]) as ch:
        stub = pb_grpc.KnowledgeServiceStub(ch)
        with pytest.raises(grpc.RpcError) as e:
            stub.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(card)), metadata=CONTRIB, timeout=60)
    meta = dict(e.value.trailing_metadata() or ())
    return e.value.code(), meta.get(FIELD_KEY), e.value.details()


def test_too_many_list_entries_is_invalid_argument_naming_the_list(server):
    code, field, details = _upsert(server, sources=["https://example.com/x"] * 300)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and field == "card.sources", details


def test_a_card_over_the_total_cap_is_invalid_argument(server):
    code, field, details = _upsert(server, evidence=[{"kind": "doc", "text": "e" * 7000} for _ in range(20)])
    assert code == grpc.StatusCode.INVALID_ARGUMENT and field == "card.evidence", details
    assert "LADDER_MAX_CARD_BYTES" in details
