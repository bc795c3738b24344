"""In-process KB client: the KBClient protocol over an embedded KnowledgeBase (no server, no sockets).

It opens the KB home as its single writer; if a server already owns that home, opening fails with a clear
``Unavailable`` that says to pass ``--server``.
"""

from __future__ import annotations

from kb.models import AnyCard, CauseRecord, Trajectory
from kb.models.search import (
    CardFilter,
    CardPage,
    InvariantQuery,
    QuickMatchQuery,
    SearchHit,
    SearchQuery,
)
from kb.service import KnowledgeBase
from kb.settings import Settings
from kb.vocab import CardStatus

__all__ = ["LocalKBClient"]


class LocalKBClient:
    def __init__(self, settings: Settings | None = None, *, kb: KnowledgeBase | None = None,
                 owns: bool | None = None, readonly: bool | None = False) -> None:
        self.kb = kb or KnowledgeBase.open(settings or Settings(), readonly=readonly)
        self.opened_as = self.kb.opened_as
        self._owns = kb is None if owns is None else owns  # close() closes the KB only if this client owns it

    def search(self, query: SearchQuery) -> list[SearchHit]:
        return self.kb.search(query)

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]:
        return self.kb.quick_match(query)

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        return self.kb.get_card(card_id, version)

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        return self.kb.list_cards(filter, page_size, cursor)

    def list_causes(self, statuses: list[str] | tuple[str, ...] = ()) -> list[CauseRecord]:
        return self.kb.list_causes(statuses)

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        return self.kb.get_invariants(query)

    def upsert_card(self, card: AnyCard) -> AnyCard:
        return self.kb.upsert_card(card)

    def set_card_status(self, card_id: str, status: CardStatus, reason: str = "",
                        version: int | None = None) -> AnyCard:
        return self.kb.set_card_status(card_id, status, reason, version)

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        return self.kb.submit_trajectory(trajectory)

    def warm(self) -> None:
        """Load the query encoder now (seconds on first use), e.g. in a thread while a session times its baseline."""
        self.kb.embedder.warm()

    def close(self) -> None:
        if self._owns:
            self.kb.close()

    def __enter__(self) -> LocalKBClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
