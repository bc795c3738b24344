"""gRPC KB client: the KBClient protocol over the generated stubs. Every RpcError becomes the matching
kb.errors exception through one function (``retrieval.errors.from_rpc_error``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc

from kb.models import AnyCard, CauseRecord, Trajectory
from kb.models.search import CardFilter, CardPage, InvariantQuery, QuickMatchQuery, SearchHit, SearchQuery
from kb.settings import Settings
from kb.vocab import CardStatus
from retrieval import convert
from retrieval.errors import from_rpc_error
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

__all__ = ["GrpcKBClient"]

T = TypeVar("T")


def _read_ca(path: Path) -> bytes:
    from kb.errors import InvalidArgument

    try:
        return path.read_bytes()
    except OSError as e:
        raise InvalidArgument(f"cannot read the CA bundle {path} (LADDER_TLS_CA): {e.strerror}", field="tls_ca") from e


class GrpcKBClient:
    def __init__(self, target: str, settings: Settings | None = None, *, timeout: float = 30.0,
                 token: str | None = None) -> None:
        settings = settings or Settings()
        opts = [("grpc.max_receive_message_length", settings.max_message_bytes),
                ("grpc.max_send_message_length", settings.max_message_bytes)]
        if settings.tls_ca or target.startswith("tls:"):  # TLS: trust tls_ca, else the system's root CAs
            ca = _read_ca(settings.tls_ca) if settings.tls_ca else None
            self.channel = grpc.secure_channel(target.removeprefix("tls:"), grpc.ssl_channel_credentials(ca), opts)
        else:
            self.channel = grpc.insecure_channel(target, opts)
        self.knowledge = pb_grpc.KnowledgeServiceStub(self.channel)
        self.synthesis = pb_grpc.SynthesisServiceStub(self.channel)
        self.timeout = timeout
        tok = token or (settings.token.get_secret_value() if settings.token else None)
        self._metadata = (("authorization", f"Bearer {tok}"),) if tok else ()

    def call(self, method: Callable[..., T], request: Any, timeout: float | None = None) -> T:
        try:
            return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise from_rpc_error(e) from e

    def wait_ready(self, timeout: float = 60.0) -> None:
        import time

        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self.channel)
        deadline = time.monotonic() + timeout
        while True:
            try:
                r = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
                if r.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                from kb.errors import Unavailable

                raise Unavailable(f"server not SERVING after {timeout:.0f}s; is `ladder serve` running?")
            time.sleep(0.2)

    # ------------------------------------------------------------------ KBClient
    def search(self, query: SearchQuery) -> list[SearchHit]:
        req = pb.SearchRequest(text=query.text, top_k=query.top_k, filter=convert.to_proto_filter(query.filter),
                               mode=query.mode)
        return convert.from_proto_hits(self.call(self.knowledge.Search, req))

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]:
        req = pb.QuickMatchRequest(symptoms=pb.Symptoms(**query.symptoms.model_dump()), text=query.text,
                                   backend=query.backend, top_k=query.top_k, exclude=query.exclude)
        return convert.from_proto_hits(self.call(self.knowledge.QuickMatch, req))

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        return convert.from_proto_card(self.call(self.knowledge.GetCard, pb.GetCardRequest(id=card_id,
                                                                                           version=version or 0)))

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        req = pb.ListCardsRequest(filter=convert.to_proto_filter(filter), page_size=page_size, cursor=cursor)
        return convert.from_proto_page(self.call(self.knowledge.ListCards, req))

    def list_causes(self, statuses: list[str] | tuple[str, ...] = ()) -> list[CauseRecord]:
        """The KB's causes (every status, or those in ``statuses``), in id order."""
        return convert.from_proto_causes(self.call(self.knowledge.ListCauses, pb.ListCausesRequest(statuses=statuses)))

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        req = pb.GetInvariantsRequest(pass_names=query.pass_names, ir_signatures=query.ir_signatures,
                                      backend=query.backend, text=query.text, top_k=query.top_k)
        return convert.from_proto_hits(self.call(self.knowledge.GetInvariants, req))

    def upsert_card(self, card: AnyCard) -> AnyCard:
        req = pb.UpsertCardRequest(card=convert.to_proto_card(card))
        return convert.from_proto_card(self.call(self.knowledge.UpsertCard, req))

    def set_card_status(self, card_id: str, status: CardStatus, reason: str = "",
                        version: int | None = None) -> AnyCard:
        req = pb.SetCardStatusRequest(id=card_id, status=status, reason=reason, version=version or 0)
        return convert.from_proto_card(self.call(self.knowledge.SetCardStatus, req))

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        req = convert.to_proto_trajectory(trajectory)
        return self.call(self.synthesis.SubmitTrajectory, req).created

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> GrpcKBClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
