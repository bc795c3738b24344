"""One policy, three clients (issue 17, item 6): the embedded KB, the gRPC client and a read-only snapshot answer
the same calls the same way: paging with opaque cursors, card versions, the page-size bounds, and writes (a write
never activates a card; activation is the reviewer's step; a snapshot refuses writes). One parametrised suite."""

from __future__ import annotations

import shutil

import pytest

from kb.errors import InvalidArgument, NotFound, Unavailable
from kb.models import PatternCard, ProblemRef, Round, Trajectory
from kb.models.search import CardFilter
from kb.settings import Settings

TOKENS = {"review-token-0123456789": {"name": "ana", "roles": ["reviewer"]}}
CLIENTS = ("local", "grpc", "snapshot")


@pytest.fixture(scope="module")
def backends(tmp_path_factory, seeded_home, embedder):
    """A served KB (for the gRPC client and the snapshot) and a second, embedded one (for the local client)."""
    from kb.service import KnowledgeBase
    from kb.snapshot import write_snapshot
    from retrieval.server.app import create_server

    root = tmp_path_factory.mktemp("policy")
    for name in ("srv", "local"):
        shutil.copytree(seeded_home, root / name, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=root / "srv", tokens=TOKENS, port=0)
    kb = KnowledgeBase.open(settings, embedder=embedder)
    write_snapshot(kb, root / "snap")
    handle = create_server(settings, kb=kb, bind="127.0.0.1:0")
    assert handle.wait_ready(60)
    local = KnowledgeBase.open(Settings(home=root / "local"), embedder=embedder)
    yield {"handle": handle, "local": local, "snap": root / "snap", "outbox": root / "outbox"}
    local.close()
    handle.stop(0)


@pytest.fixture(params=CLIENTS)
def client(request, backends, embedder):
    from kb.snapshot import SnapshotKB
    from retrieval.client import GrpcKBClient, LocalKBClient

    if request.param == "local":
        c = LocalKBClient(kb=backends["local"], owns=False)
    elif request.param == "grpc":
        c = GrpcKBClient(f"127.0.0.1:{backends['handle'].port}", token="review-token-0123456789")
    else:
        c = SnapshotKB(backends["snap"], embedder=embedder, outbox=backends["outbox"])
    c.kind = request.param
    yield c
    c.close()


def test_paging_walks_every_card_once_with_opaque_cursors(client):
    seen, cursor, pages = [], "", 0
    while True:
        page = client.list_cards(CardFilter(statuses=[]), page_size=17, cursor=cursor)
        seen += [c.id for c in page.cards]
        pages += 1
        if not page.next_cursor:
            break
        assert page.next_cursor != page.cards[-1].id  # a token, not a raw id
        cursor = page.next_cursor
    assert len(seen) == len(set(seen)) == page.total and pages == -(-page.total // 17)
    assert seen == sorted(seen)


@pytest.mark.parametrize("bad", [{"page_size": -1}, {"page_size": 501}, {"cursor": "not-a-cursor"}])
def test_bad_paging_arguments_name_the_field(client, bad):
    with pytest.raises(InvalidArgument) as e:
        client.list_cards(CardFilter(), **{"page_size": 10, **bad})
    assert e.value.field == next(iter(bad))


def test_versions_are_honoured(client):
    card = client.get_card("top2-pairwise-max")
    assert client.get_card("top2-pairwise-max", card.version) == card
    with pytest.raises(NotFound) as e:
        client.get_card("top2-pairwise-max", card.version + 5)
    assert e.value.field in ("id", "version")
    with pytest.raises(InvalidArgument):
        client.get_card("")


def _card(cid: str) -> PatternCard:
    return PatternCard(id=cid, title=f"Policy probe {cid}", summary="A card written by the client policy suite.",
                       backends=["cuda"], levels=["L1"])  # the model's default status is active


def test_a_write_never_activates_and_review_does(client):
    cid = f"policy-{client.kind}"
    if client.kind == "snapshot":
        with pytest.raises(Unavailable):
            client.upsert_card(_card(cid))
        with pytest.raises(Unavailable):
            client.set_card_status("top2-pairwise-max", "deprecated")
        return
    stored = client.upsert_card(_card(cid))
    assert stored.status == "proposed"
    assert client.set_card_status(cid, "active", version=stored.version).status == "active"
    with pytest.raises(InvalidArgument) as e:
        client.set_card_status(cid, "shiny")
    assert e.value.field == "status"


def test_a_copy_of_a_trajectory_is_not_new_evidence(client):
    t = Trajectory(id=f"policy-{client.kind}-1", problem=ProblemRef(name=f"softmax-{client.kind}"), backend="cuda",
                   rounds=[Round(index=0, outcome="baseline", hypothesis="baseline")])
    assert client.submit_trajectory(t) is True
    assert client.submit_trajectory(t) is False  # the same id
    assert client.submit_trajectory(t.model_copy(update={"id": f"policy-{client.kind}-2"})) is False  # a copy
