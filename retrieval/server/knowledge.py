"""KnowledgeService servicer: each RPC is from_proto -> KnowledgeBase method -> to_proto, nothing more.

Responses are kept under the server's message limit: a ListCards page that would exceed it is cut short (its
``next_cursor`` continues after the last card sent, so nothing is lost), and search results drop their
lowest-ranked hits. Without this a valid request could fail with RESOURCE_EXHAUSTED on a KB with long cards.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import grpc

from kb.errors import InvalidArgument
from kb.models.search import CardFilter
from kb.service import KnowledgeBase, encode_cursor
from kb.vocab import CardStatus
from retrieval import convert
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

__all__ = ["KnowledgeServicer", "check_deadline", "fit_message", "message_budget"]

log = logging.getLogger(__name__)
_HEADROOM = 1024  # bytes kept free under the limit for framing and the other fields


def check_deadline(context: grpc.ServicerContext) -> None:
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:
        context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline expired before the request was served")


def message_budget(max_message_bytes: int) -> int:
    """The bytes a response may use under the server's message limit (framing and the other fields aside)."""
    return max_message_bytes - _HEADROOM


def fit_message(msg: Any, field: str, limit: int) -> int:
    """Drop trailing items of the repeated ``field`` until ``msg`` serialises under ``limit`` bytes (at least one
    item is kept). Returns how many were dropped."""
    size = msg.ByteSize()
    if size <= limit:
        return 0
    items = getattr(msg, field)
    dropped = 0
    while len(items) > 1 and size > limit:
        n = items[-1].ByteSize()
        size -= n + 1 + len(_varint(n))  # the item, its tag byte and its length prefix
        del items[-1]
        dropped += 1
    return dropped


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


class KnowledgeServicer(pb_grpc.KnowledgeServiceServicer):
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    @property
    def _limit(self) -> int:
        return message_budget(self.kb.settings.max_message_bytes)

    def _hits(self, resp: pb.SearchResponse) -> pb.SearchResponse:
        dropped = fit_message(resp, "hits", self._limit)
        if dropped:
            log.info("dropped the %d lowest-ranked hits to stay under the %d-byte message limit", dropped,
                     self.kb.settings.max_message_bytes)
        return resp

    def Search(self, request: pb.SearchRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return self._hits(convert.to_proto_hits(self.kb.search(convert.from_proto_search(request))))

    def QuickMatch(self, request: pb.QuickMatchRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return self._hits(convert.to_proto_hits(self.kb.quick_match(convert.from_proto_quick_match(request))))

    def GetCard(self, request: pb.GetCardRequest, context: grpc.ServicerContext) -> pb.Card:
        if request.version < 0:
            raise InvalidArgument("version must be >= 0 (0 = the served version)", field="version")
        return convert.to_proto_card(self.kb.get_card(request.id, request.version or None))

    def ListCards(self, request: pb.ListCardsRequest, context: grpc.ServicerContext) -> pb.ListCardsResponse:
        f = convert.validate(CardFilter, convert.from_proto_filter(request.filter), "filter")
        resp = convert.to_proto_page(self.kb.list_cards(f, request.page_size or 50, request.cursor))
        if fit_message(resp, "cards", self._limit):
            resp.next_cursor = encode_cursor(resp.cards[-1].id)  # the next page starts after the last card sent
        return resp

    def GetInvariants(self, request: pb.GetInvariantsRequest, context: grpc.ServicerContext) -> pb.SearchResponse:
        check_deadline(context)
        return self._hits(convert.to_proto_hits(self.kb.get_invariants(convert.from_proto_invariant_query(request))))

    def UpsertCard(self, request: pb.UpsertCardRequest, context: grpc.ServicerContext) -> pb.Card:
        if not request.HasField("card"):
            raise InvalidArgument("card is required", field="card")
        # the KB stores every write as a proposal; only a reviewer's SetCardStatus activates (kb.service)
        return convert.to_proto_card(self.kb.upsert_card(convert.from_proto_card(request.card)))

    def ListCauses(self, request: pb.ListCausesRequest, context: grpc.ServicerContext) -> pb.ListCausesResponse:
        return convert.to_proto_causes(self.kb.list_causes(list(request.statuses)))

    def SetCardStatus(self, request: pb.SetCardStatusRequest, context: grpc.ServicerContext) -> pb.Card:
        return convert.to_proto_card(
            self.kb.set_card_status(request.id, cast(CardStatus, request.status), request.reason,
                                    request.version or None))
