"""Read-only KB snapshots for machines that cannot reach the KB server (e.g. a lent GPU with no network).

``write_snapshot`` dumps the served cards and their vectors from the index; ``SnapshotKB`` serves the same
search / quick-match / invariant queries from them with the real engine (exact dense search, BM25, RRF), without
chromadb or the SQLite store. Writes are refused; trajectories go to an outbox folder to be submitted to the
real KB later (``ladder synthesize FILE ...``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kb.errors import InvalidArgument, NotFound, Unavailable
from kb.models import AnyCard, Trajectory, parse_card
from kb.models.search import CardFilter, CardPage, InvariantQuery, QuickMatchQuery, SearchHit, SearchQuery
from kb.search.embedding import Embedder
from kb.search.engine import Engine
from kb.store.vector import VectorIndex

__all__ = ["SnapshotKB", "write_snapshot"]


def write_snapshot(kb, out_dir: Path) -> int:  # noqa: ANN001 - a kb.service.KnowledgeBase
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cards = kb.engine.cards
    rows = [kb.index.row_of(c.id) for c in cards]
    vecs = np.stack([kb.index.matrix[r] for r in rows]).astype(np.float16)
    (out / "cards.jsonl").write_text("\n".join(c.model_dump_json() for c in cards) + "\n")
    np.save(out / "vectors.npy", vecs)
    (out / "meta.json").write_text(json.dumps({"cards": len(cards), "embedding_model": kb.embedder.name}))
    return len(cards)


class SnapshotKB:
    """A read-only KBClient over a snapshot directory."""

    def __init__(self, path: Path, *, embedder: Embedder | None = None, outbox: Path | None = None) -> None:
        path = Path(path)
        cards = [parse_card(json.loads(line)) for line in (path / "cards.jsonl").read_text().splitlines() if line]
        vecs = np.load(path / "vectors.npy").astype(np.float32)
        index = VectorIndex(path / "unused")  # memory only: never opened, so chromadb is never imported
        index.upsert_memory([c.id for c in cards], [c.version for c in cards], vecs)
        self.engine = Engine(cards, index, embedder or Embedder())
        self.outbox = outbox

    def search(self, query: SearchQuery) -> list[SearchHit]:
        return self.engine.search(query)

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]:
        return self.engine.quick_match(query)

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        if not (query.pass_names or query.ir_signatures or query.text.strip()):
            raise InvalidArgument("give at least one of pass_names, ir_signatures or text", field="pass_names")
        return self.engine.invariants(query)

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        pos = self.engine.pos.get(card_id)
        if pos is None:
            raise NotFound(f"card {card_id!r} is not in this snapshot", field="id")
        return self.engine.cards[pos]

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        mask = self.engine.filter_mask(filter)
        ids = sorted(c.id for c, ok in zip(self.engine.cards, mask, strict=True) if ok)
        start = ids.index(cursor) + 1 if cursor in ids else 0
        page = ids[start:start + page_size]
        nxt = page[-1] if start + page_size < len(ids) else ""
        return CardPage(cards=[self.get_card(i) for i in page], next_cursor=nxt, total=len(ids))

    def upsert_card(self, card: AnyCard) -> AnyCard:
        raise Unavailable("this KB is a read-only snapshot; send card edits to the KB server")

    def set_card_status(self, card_id: str, status: str, reason: str = "") -> AnyCard:
        raise Unavailable("this KB is a read-only snapshot; review on the KB server")

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        if self.outbox is None:
            raise Unavailable("read-only snapshot with no outbox; write the trajectory with --out and submit it later")
        self.outbox.mkdir(parents=True, exist_ok=True)
        target = self.outbox / f"{trajectory.id}.json"
        if target.exists():
            return False
        target.write_text(trajectory.model_dump_json(indent=2))
        return True

    def close(self) -> None:
        pass
