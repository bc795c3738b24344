"""Every packaged card survives pydantic -> proto -> pydantic unchanged; local and gRPC clients agree."""

from __future__ import annotations

from kb.cardfiles import load_dir
from kb.models.search import CardFilter, QuickMatchQuery, SearchQuery
from kb.models.cards import Symptoms
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
