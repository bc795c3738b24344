"""Read-only KB snapshots for machines that cannot reach the KB server (e.g. a lent GPU with no network).

``write_snapshot`` dumps the served cards and their vectors from the index; ``SnapshotKB`` serves the same
search / quick-match / invariant queries from them with the real engine (exact dense search, BM25, RRF), without
chromadb or the SQLite store. Writes are refused; trajectories go to an outbox folder to be submitted to the
real KB later (``ladder synthesize FILE ...``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from kb.causes import SEED_CAUSES
from kb.errors import InvalidArgument, NotFound, Unavailable
from kb.evidence import evidence_key
from kb.models import AnyCard, CauseRecord, Trajectory, parse_card
from kb.models.search import (
    CardFilter,
    CardPage,
    InvariantQuery,
    QuickMatchQuery,
    SearchHit,
    SearchQuery,
)
from kb.safe_io import safe_dir, write_file
from kb.search.embedding import Embedder
from kb.search.engine import Engine
from kb.service import page_cards
from kb.store.vector import VectorIndex

__all__ = ["SnapshotKB", "write_snapshot"]


def write_snapshot(kb, out_dir: Path) -> int:  # noqa: ANN001 - a kb.service.KnowledgeBase
    cards = kb.engine.cards
    rows = [kb.index.row_of(c.id) for c in cards]
    return write_snapshot_cards(cards, np.stack([kb.index.matrix[r] for r in rows]), kb.embedder.name, out_dir,
                                causes=kb.list_causes())


def write_snapshot_cards(cards: list[AnyCard], vectors: np.ndarray, model: str, out_dir: Path, *,
                         causes: list[CauseRecord] | None = None) -> int:
    """Write ``cards`` and their vectors (rows in the same order) as a snapshot directory, with the KB's
    ``causes`` (``causes.jsonl``; a snapshot without it serves the seed causes)."""
    out = safe_dir(Path(out_dir))  # files are written through no symlink (kb.safe_io)
    write_file(out / "cards.jsonl", "\n".join(c.model_dump_json() for c in cards) + "\n")
    if causes is not None:
        write_file(out / "causes.jsonl", "".join(c.model_dump_json() + "\n" for c in causes))
    buf = io.BytesIO()
    np.save(buf, np.asarray(vectors).astype(np.float16))
    write_file(out / "vectors.npy", buf.getvalue())
    write_file(out / "meta.json", json.dumps({"cards": len(cards), "embedding_model": model}))
    return len(cards)


class SnapshotKB:
    """A read-only KBClient over a snapshot directory."""

    def __init__(self, path: Path, *, embedder: Embedder | None = None, outbox: Path | None = None) -> None:
        path = Path(path)
        if not (path / "cards.jsonl").is_file() or not (path / "vectors.npy").is_file():
            raise InvalidArgument(f"{path} is not a KB snapshot (no cards.jsonl + vectors.npy); write one with "
                                  "`ladder kb snapshot DIR`, or unset LADDER_SNAPSHOT", field="snapshot")
        self.path = path
        self.opened_as = f"snapshot {path} (LADDER_SNAPSHOT, read-only)"
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
        if not card_id:
            raise InvalidArgument("a card id is required", field="id")
        pos = self.engine.pos.get(card_id)
        if pos is None:
            raise NotFound(f"card {card_id!r} is not in this snapshot", field="id")
        card = self.engine.cards[pos]
        if version and version != card.version:
            raise NotFound(f"card {card_id!r} version {version} is not in this snapshot: it holds only the served "
                           f"version ({card.version}); ask the KB server for older ones", field="version")
        return card

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        return page_cards(self.engine, filter, page_size, cursor)

    def list_causes(self, statuses: list[str] | tuple[str, ...] = ()) -> list[CauseRecord]:
        """The snapshot's causes (``causes.jsonl``), or the seed causes for a snapshot written without them."""
        f = self.path / "causes.jsonl"
        causes = ([CauseRecord.model_validate_json(line) for line in f.read_text().splitlines() if line]
                  if f.is_file() else list(SEED_CAUSES))
        return [c for c in causes if not statuses or c.status in statuses]

    def upsert_card(self, card: AnyCard) -> AnyCard:
        raise Unavailable("this KB is a read-only snapshot; send card edits to the KB server")

    def set_card_status(self, card_id: str, status: str, reason: str = "", version: int | None = None) -> AnyCard:
        raise Unavailable("this KB is a read-only snapshot; review on the KB server")

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        if self.outbox is None:
            raise Unavailable("read-only snapshot with no outbox; write the trajectory with --out and submit it later")
        self.outbox.mkdir(parents=True, exist_ok=True)
        target = self.outbox / f"{trajectory.id}.json"
        if target.exists():
            return False
        digest = evidence_key(trajectory)
        copy = any(_hash_of(f) == digest for f in self.outbox.glob("*.json"))
        target.write_text(trajectory.model_dump_json(indent=2))
        return not copy  # kept, but a copy of stored content is no new evidence (as in the KB store)

    def warm(self) -> None:
        """Load the query encoder now (seconds on first use), e.g. in a thread while a session times its baseline."""
        self.engine.embedder.warm()

    def close(self) -> None:
        pass

    def __enter__(self) -> SnapshotKB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stats(self) -> dict[str, object]:
        by_kind: dict[str, int] = {}
        by_status: dict[str, int] = {}
        for c in self.engine.cards:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
            by_status[c.status] = by_status.get(c.status, 0) + 1
        return {"kb": self.opened_as, "cards": len(self.engine.cards), "by_kind": by_kind, "by_status": by_status,
                "embedding_model": self.engine.embedder.name}


def _hash_of(path: Path) -> str | None:
    try:
        return evidence_key(Trajectory.model_validate_json(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
