"""The KB client protocol: what the optimizer, the IR engine (L4) and tools may ask of the KB.

Two implementations exist in ``retrieval.client``: an in-process one over an embedded KB and a gRPC one;
``retrieval.client.connect()`` is the one factory that picks between them. Code that only needs to *ask*
the KB depends on this Protocol and nothing else.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kb.models import AnyCard, Trajectory
from kb.models.search import CardFilter, CardPage, InvariantQuery, QuickMatchQuery, SearchHit, SearchQuery
from kb.vocab import CardStatus

__all__ = ["KBClient"]


@runtime_checkable
class KBClient(Protocol):
    def search(self, query: SearchQuery) -> list[SearchHit]: ...

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]: ...

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard: ...

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage: ...

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]: ...

    def upsert_card(self, card: AnyCard) -> AnyCard: ...

    def set_card_status(self, card_id: str, status: CardStatus, reason: str = "",
                        version: int | None = None) -> AnyCard: ...

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        """Store a finished trajectory; returns False if a trajectory with that id was already stored."""
        ...

    def close(self) -> None: ...
