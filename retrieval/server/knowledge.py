"""KnowledgeService servicer: each RPC is from_proto -> KnowledgeBase method -> to_proto, nothing more."""

from __future__ import annotations

import grpc

from kb.errors import InvalidArgument
from kb.models.search import CardFilter
from kb.service import KnowledgeBase
from retrieval import convert
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

__all__ = ["KnowledgeServicer", "check_deadline"]


def check_deadline(context: grpc.ServicerContext) -> None:
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline expired before the request was served")


class KnowledgeServicer(pb_grpc.KnowledgeServiceServicer):
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def Search(self, request: pb.SearchRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return convert.to_proto_hits(self.kb.search(convert.from_proto_search(request)))

    def QuickMatch(self, request: pb.QuickMatchRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return convert.to_proto_hits(self.kb.quick_match(convert.from_proto_quick_match(request)))

    def GetCard(self, request: pb.GetCardRequest, context: grpc.ServicerContext) -> pb.Card:
        if request.version < 0:
            raise InvalidArgument("version must be >= 0 (0 = the served version)", field="version")
        return convert.to_proto_card(self.kb.get_card(request.id, request.version or None))

    def ListCards(self, request: pb.ListCardsRequest, context: grpc.ServicerContext) -> pb.ListCardsResponse:
        f = convert.validate(CardFilter, convert.from_proto_filter(request.filter), "filter")
        return convert.to_proto_page(self.kb.list_cards(f, request.page_size or 50, request.cursor))

    def GetInvariants(self, request: pb.GetInvariantsRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return convert.to_proto_hits(self.kb.get_invariants(convert.from_proto_invariant_query(request)))

    def UpsertCard(self, request: pb.UpsertCardRequest, context: grpc.ServicerContext) -> pb.Card:
        if not request.HasField("card"):
            raise InvalidArgument("card is required", field="card")
        card = convert.from_proto_card(request.card)
        if card.status == "active":  # contributors propose; only a reviewer's SetCardStatus activates
            card = card.model_copy(update={"status": "proposed"})
        return convert.to_proto_card(self.kb.upsert_card(card))

    def SetCardStatus(self, request: pb.SetCardStatusRequest, context: grpc.ServicerContext) -> pb.Card:
        from kb.vocab import CARD_STATUSES

        if request.status not in CARD_STATUSES:
            raise InvalidArgument(f"status must be one of {sorted(CARD_STATUSES)}, got {request.status!r}",
                                  field="status")
        if not request.id:
            raise InvalidArgument("id is required", field="id")
        return convert.to_proto_card(
            self.kb.set_card_status(request.id, request.status, request.reason, request.version or None))
