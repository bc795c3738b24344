"""The KnowledgeBase: the pure domain service behind every transport.

It owns the structured store (source of truth), the derived vector index and the in-memory search engine,
and implements the ``kb.client.KBClient`` operations with pydantic in and out. The gRPC servicers and the
in-process client are thin adapters over this class.
"""

from __future__ import annotations

import base64
import bisect
import fcntl
import json
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from kb.cardfiles import dump_card, load_dir
from kb.causes import SEED_CAUSES, cause_tokens, check_cause_id
from kb.errors import InvalidArgument, NotFound, StorageError, Unavailable
from kb.evidence import check_plausible
from kb.limits import Limits, check_value
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
from kb.search.bm25 import BM25Index
from kb.search.embedding import DIM, Embedder
from kb.search.engine import Engine
from kb.settings import Settings
from kb.store import StructuredStore, VectorIndex
from kb.vocab import CARD_STATUSES, CardStatus

__all__ = ["UPSERT_STATUSES", "KnowledgeBase", "check_storable", "encode_cursor", "page_cards"]

#: the statuses a card write may store; anything else (``active`` above all) is stored as ``proposed``
UPSERT_STATUSES = frozenset({"draft", "proposed"})

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]


class KnowledgeBase:
    """Open with ``KnowledgeBase.open(settings)``; close with ``close()`` (or use as a context manager)."""

    def __init__(self, settings: Settings, store: StructuredStore, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.readonly = store.readonly
        #: which KB this is and how it was opened, for commands to say (``ladder kb stats`` prints it)
        self.opened_as = f"{settings.home}" + (" (read-only)" if store.readonly else "")
        self.store = store
        self.embedder = embedder or Embedder(cache_size=settings.embed_cache_size,
                                            model_path=settings.embedding_model_dir, backend=settings.embed_backend)
        self.index = VectorIndex(settings.index_dir)
        self._engine: Engine | None = None
        #: id -> (stored JSON, parsed card) of the served cards: an engine rebuild parses only what changed
        self._parsed: dict[str, tuple[str, AnyCard]] = {}
        self._stale = False  # the store changed after the engine was built; the next read rebuilds it
        self._write_lock = threading.Lock()  # card writes, and every change to the index and the engine
        self._cache: OrderedDict[str, list[SearchHit]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.cache_hits = 0
        self.ready = False

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def open(cls, settings: Settings | None = None, *, embedder: Embedder | None = None,
             progress: Progress | None = None, readonly: bool | None = False) -> KnowledgeBase:
        """Open (creating and seeding if empty) the KB at ``settings.home`` and load its index.

        ``readonly=True`` opens it for reading only: SQLite in read-only mode, no writer lock, no seeding, and
        the vectors from the writer's mirror file (``vectors.npz``), with the cards it lacks embedded in memory;
        Chroma is never opened. That works while a server owns the home. ``readonly=None``: as the writer if no
        other process owns the home, else read-only (what read commands use)."""
        settings = settings or Settings()
        holder = writer_of(settings.home)
        if readonly is None:
            readonly = holder is not None
        store = StructuredStore(settings.db_path, readonly=bool(readonly))
        kb = cls(settings, store, embedder)
        try:
            if readonly:
                kb.opened_as += f": process {holder} (a server) owns it" if holder else ""
                kb._load_readonly(progress=progress)
            else:
                if settings.seed_on_open:
                    kb.seed(progress=progress)
                kb.load_index(progress=progress)
        except BaseException:  # cleanup boundary: close the store on any failure, then re-raise it unchanged
            store.close()
            raise
        return kb

    def served_cards(self) -> list[AnyCard]:
        """The served cards in id order, parsing only those whose stored JSON changed since the last call (a rebuild
        after one write used to re-parse every card: seconds on a KB of large cards)."""
        out: list[AnyCard] = []
        fresh: dict[str, tuple[str, AnyCard]] = {}
        for cid, _version, doc in self.store.iter_served_docs():
            hit = self._parsed.get(cid)
            card = hit[1] if hit is not None and hit[0] == doc else parse_card(json.loads(doc))
            fresh[cid] = (doc, card)
            out.append(card)
        self._parsed = fresh
        return out

    def _load_readonly(self, *, progress: Progress | None = None) -> None:
        cards = self.served_cards()
        have = _read_mirror(self.settings.mirror_path)
        vecs = np.zeros((len(cards), DIM), dtype=np.float32)
        missing = []
        for i, c in enumerate(cards):
            vec = have.get((c.id, c.version))
            if vec is None:
                missing.append(i)
            else:
                vecs[i] = vec
        for off in range(0, len(missing), 256):  # cards written since the writer last saved its mirror
            chunk = missing[off:off + 256]
            vecs[chunk] = self.embedder.encode([cards[i].search_text() for i in chunk])
            if progress:
                progress("embed", min(off + 256, len(missing)), len(missing))
        self.index.upsert_memory([c.id for c in cards], [c.version for c in cards], vecs)
        self._engine = Engine(cards, self.index, self.embedder, rrf_k=self.settings.rrf_k,
                              fusion=self.settings.fusion)
        self.ready = True

    def save_mirror(self) -> None:
        """Write the index's vectors to ``vectors.npz`` for read-only openers (atomically; writer only)."""
        if self.readonly or not self.index.ids:
            return
        path = self.settings.mirror_path
        tmp = path.with_name(path.name + ".tmp.npz")
        try:
            with self.index._lock:
                np.savez(tmp, ids=np.asarray(self.index.ids), matrix=self.index.matrix,
                         versions=np.asarray([self.index.versions.get(i, 0) for i in self.index.ids]))
            os.replace(tmp, path)
        except OSError as e:  # a full disk: readers embed what they lack instead
            log.warning("cannot write the read-only vector mirror %s: %s", path, e)

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.ready and not self.readonly:
            self.save_mirror()
        self.ready = False
        self.store.close()

    def seed(self, cards_dir: Path | None = None, *, progress: Progress | None = None) -> int:
        """Bring the curated card files into the store: new ids are added; a changed file becomes a new version
        only while the stored card is still the seeded one (a card edited or reviewed through the service is
        never overwritten by the package); the seed causes (``kb.causes``) likewise. Returns the number of cards and
        cause versions written."""
        cards = load_dir(cards_dir)
        added = self.store.seed_causes(SEED_CAUSES)
        for n, card in enumerate(cards, 1):
            try:
                current = self.store.get_card(card.id)
            except NotFound:
                current = None
            if current is None:
                self.store.put_card(card, action="seed")
                added += 1
            elif self.store.last_action(card.id) == "seed" and current.model_dump(
                    exclude={"version", "stats"}) != card.model_dump(exclude={"version", "stats"}):
                self.store.put_card(card.model_copy(update={"stats": current.stats}), action="seed")
                added += 1
            if progress:
                progress("seed", n, len(cards))
        return added

    def load_index(self, *, progress: Progress | None = None) -> None:
        """Open the vector index, bring it in line with the store, and build the search engine."""
        self.ready = False
        self.index.open()
        self.sync_index(progress=progress)
        self.ready = True
        self.save_mirror()

    def sync_index(self, *, progress: Progress | None = None) -> int:
        """Embed served cards whose version the index lacks, drop index entries with no card, and build the
        search engine. Returns the number embedded. Runs while loading, or under the write lock."""
        cards = self.served_cards()
        gone = sorted(set(self.index.ids) - {c.id for c in cards})
        n = self._index_cards(cards, gone, progress)
        bm25 = self._engine.bm25.successor() if self._engine is not None else BM25Index()
        self._engine = Engine(cards, self.index, self.embedder, rrf_k=self.settings.rrf_k,
                              fusion=self.settings.fusion, bm25=bm25)
        self._stale = False
        with self._cache_lock:
            self._cache.clear()
        return n

    def _index_cards(self, cards: list[AnyCard], gone: list[str], progress: Progress | None = None) -> int:
        """Embed those of ``cards`` whose version the index lacks; drop the ``gone`` ids. Returns #embedded."""
        stale = [c for c in cards if self.index.versions.get(c.id) != c.version]
        # The store has committed; a failing index write (disk full under chroma/) must not turn a durable
        # write into an error. The vectors are served from memory and the index catches up on the next open.
        try:
            if gone:
                self.index.delete(gone)
        except StorageError as e:
            log.warning("%s", e)
        batch = 256
        for off in range(0, len(stale), batch):
            chunk = stale[off:off + batch]
            vecs = self.embedder.encode([c.search_text() for c in chunk])
            try:
                self.index.upsert([c.id for c in chunk], [c.version for c in chunk], vecs, [c.kind for c in chunk])
            except StorageError as e:
                log.warning("%s", e)
            if progress:
                progress("embed", min(off + batch, len(stale)), len(stale))
        return len(stale)

    def invalidate(self) -> None:
        """Note that the store changed behind the KB (a batch written straight to the store, such as a synthesis
        run): the next read brings the index and the engine up to date, once for the whole batch."""
        self._stale = True

    def refresh(self) -> None:
        """Rebuild the engine now if a write changed the store since it was built (reads do this themselves)."""
        with self._write_lock:
            if self._stale:
                self.sync_index()

    def rebuild(self, *, progress: Progress | None = None) -> int:
        """Drop the vector index and re-derive it from the store (``ladder kb rebuild``)."""
        with self._write_lock:
            self.ready = False
            self.index.open()
            self.index.reset()
            n = self.sync_index(progress=progress)
            self.ready = True
            return n

    @property
    def engine(self) -> Engine:
        """The search engine over the served cards. Writes only mark it stale (a rebuild re-reads every served
        card); the first read after them rebuilds it once, so reads still see every acknowledged write."""
        if self._engine is None or not self.ready:
            raise Unavailable("the KB index is still loading; retry shortly (health reports SERVING when ready)")
        if self._stale:
            self.refresh()
        return self._engine

    # ------------------------------------------------------------------ reads
    def _cached(self, key: str, compute: Callable[[], list[SearchHit]]) -> list[SearchHit]:
        if not self.settings.search_cache_size:
            return compute()
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                self.cache_hits += 1
                return hit
        result = compute()
        with self._cache_lock:
            self._cache[key] = result
            while len(self._cache) > self.settings.search_cache_size:
                self._cache.popitem(last=False)
        return result

    def search(self, query: SearchQuery) -> list[SearchHit]:
        engine = self.engine
        return self._cached("s" + query.model_dump_json(), lambda: engine.search(query))

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]:
        engine = self.engine
        return self._cached("q" + query.model_dump_json(), lambda: engine.quick_match(query))

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        if not (query.pass_names or query.ir_signatures or query.text.strip()):
            raise InvalidArgument("give at least one of pass_names, ir_signatures or text", field="pass_names")
        engine = self.engine
        return self._cached("i" + query.model_dump_json(), lambda: engine.invariants(query))

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        if not card_id:
            raise InvalidArgument("a card id is required", field="id")
        if version is not None and not 0 < version < _INT64:  # SQLite would raise OverflowError past int64
            raise InvalidArgument(f"version must be in 1..{_INT64 - 1} (leave it out for the served version)",
                                  field="version")
        return self.store.get_card(card_id, version)

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        return page_cards(self.engine, filter, page_size, cursor)

    def list_causes(self, statuses: list[str] | tuple[str, ...] = ()) -> list[CauseRecord]:
        """The KB's causes (latest version of each) in id order; only those with one of ``statuses`` when given."""
        for i, st in enumerate(statuses):
            if st not in CARD_STATUSES:
                raise InvalidArgument(f"status must be one of {sorted(CARD_STATUSES)}, got {st!r}",
                                      field=f"statuses.{i}")
        return self.store.causes(statuses)

    def get_cause(self, cause_id: str) -> CauseRecord:
        check_cause_id(cause_id, "id")
        return self.store.get_cause(cause_id)

    def check_causes(self, value: AnyCard | Trajectory, field: str) -> None:
        """Raise InvalidArgument naming the field when ``value`` cites a cause this KB does not know (or rejected):
        a round's decided cause, a recipe's ``cause:<id>`` evidence token."""
        known = self.store.citable_causes()
        if isinstance(value, Trajectory):
            for i, r in enumerate(value.rounds):
                if r.stop is not None and r.stop.cause not in known:
                    check_cause_id(r.stop.cause, f"{field}.rounds.{i}.stop.cause", known)
            return
        recipe = value.rewrite.recipe if value.rewrite else None
        for name in ("requires", "forbids") if recipe else ():
            for pos, cid in cause_tokens(getattr(recipe, name)):
                check_cause_id(cid, f"{field}.rewrite.recipe.{name}.{pos}", known)

    # ------------------------------------------------------------------ writes
    def _after_write(self, card_id: str) -> None:
        """Embed the written card now (so an index failure shows at once, as for any write); the engine waits for
        the next read. Called under the write lock."""
        self._index_cards([self.store.get_card(card_id)], [])
        self._stale = True

    def upsert_card(self, card: AnyCard) -> AnyCard:
        """Store a card as a proposal: a write never activates a card, whoever sends it (a contributor over
        gRPC, the owner of an embedded KB). Activation is a review step (``set_card_status(id, "active")``,
        reviewer role), so every client obeys the same rule. A new id is stored ``proposed`` (or ``draft``); a new
        version of an active card waits for approval while the active one stays served."""
        check_storable(card, "card", self.settings.limits)
        self.check_causes(card, "card")
        if card.status not in UPSERT_STATUSES:
            card = card.model_copy(update={"status": "proposed"})
        with self._write_lock:
            stored = self.store.put_card(card)
            self._after_write(stored.id)
            return stored

    def set_card_status(self, card_id: str, status: CardStatus, reason: str = "",
                        version: int | None = None) -> AnyCard:
        """Move a card version through review (the reviewer's step; over gRPC it needs the reviewer role).

        Activating needs the ``version`` the reviewer read: without it, a version a contributor slipped in after
        the review would be the one activated. Other changes without a version act on the latest version; the
        returned card and the event log name the version acted on. Activating retires the previously served
        active version (``deprecated``)."""
        if status not in CARD_STATUSES:
            raise InvalidArgument(f"status must be one of {sorted(CARD_STATUSES)}, got {status!r}", field="status")
        if not card_id:
            raise InvalidArgument("id is required", field="id")
        check_value(reason, self.settings.limits, "reason", kind="card")
        if status == "active" and version is None:
            latest = self.store.latest_version(card_id)
            hint = f" (the latest is v{latest})" if latest is not None else ""
            raise InvalidArgument(f"activating {card_id} needs the version you reviewed{hint}: pass version, so a "
                                  "version stored after your review is never the one activated", field="version")
        if version is not None and not 0 < version < _INT64:
            raise InvalidArgument(f"version must be in 1..{_INT64 - 1}", field="version")
        with self._write_lock:
            card = self.store.set_status(card_id, status, version=version, reason=reason)
            self._after_write(card_id)
            return card

    def decide_proposal(self, proposal_id: str, *, expect: str, status: str, doc: dict[str, Any],
                        card: AnyCard | None = None, deprecate: str | None = None, reason: str = "",
                        fresh_id: bool = False, deprecate_version: int | None = None,
                        cause: CauseRecord | None = None) -> AnyCard | None:
        """Record a review decision and the card (and new cause) write it implies atomically
        (``StructuredStore.decide_proposal``: a new card never replaces one that took its id meanwhile; a
        deprecation acts on the version it was proposed on); the search index then serves the card like any other
        write."""
        if card is not None:
            check_storable(card, "card", self.settings.limits)
        if cause is not None:
            check_storable(cause, "cause", self.settings.limits)
        with self._write_lock:
            stored = self.store.decide_proposal(proposal_id, expect=expect, status=status, doc=doc, card=card,
                                                deprecate=deprecate, reason=reason, fresh_id=fresh_id,
                                                deprecate_version=deprecate_version, cause=cause)
            if stored is not None:
                self._after_write(stored.id)
            return stored

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        """Store a trajectory (True when it is new evidence; a copy is kept but counts once). Refused, naming the
        field, when over the limits or when a speedup or time is implausible (``kb.evidence.check_plausible``)."""
        check_storable(trajectory, "trajectory", self.settings.limits, kind="document")
        check_plausible(trajectory, "trajectory", max_speedup=self.settings.max_speedup)
        self.check_causes(trajectory, "trajectory")
        return self.store.put_trajectory(trajectory)

    # ------------------------------------------------------------------ admin
    def stats(self) -> dict[str, Any]:
        engine = self.engine
        by_kind: dict[str, int] = {}
        by_status: dict[str, int] = {}
        for c in engine.cards:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
            by_status[c.status] = by_status.get(c.status, 0) + 1
        return {
            "home": str(self.settings.home),
            "opened": "read-only" if self.readonly else "writer",
            "cards": len(engine.cards),
            "by_kind": by_kind,
            "by_status": by_status,
            "indexed_vectors": len(self.index),
            "trajectories": self.store.count_trajectories(unique=True),  # evidence: copies count once
            "trajectory_copies": self.store.count_trajectories() - self.store.count_trajectories(unique=True),
            "proposals": len(self.store.list_proposals()),
            "causes": len(self.store.causes(("active",))),
            "embedding_model": self.embedder.name,
            "cache_hits": self.cache_hits,
        }

    def export(self, out_dir: Path) -> int:
        """Write every served card as curated YAML under ``out_dir/<kind>s/<id>.yaml``."""
        return export_cards(self.store.served_cards(), out_dir)


_INT64 = 2**63


def export_cards(cards: list[AnyCard], out_dir: Path) -> int:
    """Write ``cards`` as curated YAML under ``out_dir/<kind>s/<id>.yaml``; returns how many. Nothing is written
    through a symlink already in the destination (``kb.safe_io``)."""
    out = safe_dir(Path(out_dir))
    folders = {"pattern": "patterns", "anti_signal": "anti_signals", "invariant": "invariants"}
    for card in cards:
        d = safe_dir(out / folders[card.kind])
        write_file(d / f"{card.id}.yaml", dump_card(card))
    return len(cards)


def writer_of(home: Path) -> str | None:
    """The pid (as written in ``writer.lock``) of the process that owns ``home`` for writing, or None."""
    lock = Path(home) / "writer.lock"
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.read(fd, 64).decode(errors="replace").strip() or "unknown"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_mirror(path: Path) -> dict[tuple[str, int], np.ndarray]:
    """(id, version) -> vector from a writer's mirror file; empty when there is none (or it is unreadable)."""
    try:
        with np.load(path) as z:
            return {(str(i), int(v)): row for i, v, row in zip(z["ids"], z["versions"], z["matrix"], strict=True)}
    except (OSError, ValueError, KeyError):
        return {}


def check_storable(value: Any, field: str, limits: Limits | None = None, *,
                   kind: Literal["card", "document"] = "card") -> None:
    """Raise InvalidArgument naming the field for a value over ``limits`` (``kb.limits.check_value``: depth,
    entries, and for a card each field's size), or with a number the KB could store but not read back
    faithfully: NaN or an infinity (JSON has neither, so it would come back as null and fail validation on
    every later read), or an integer outside int64 (the wire type of every integer on a card)."""
    data = value.model_dump() if hasattr(value, "model_dump") else value
    check_value(data, limits or Limits(), field, kind=kind)
    stack: list[tuple[Any, str]] = [(data, field)]
    while stack:
        v, path = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise InvalidArgument(f"{v} is not a storable number; give a finite value or leave it out", field=path)
        if isinstance(v, int) and not isinstance(v, bool) and not -_INT64 <= v < _INT64:
            raise InvalidArgument("integer out of range: it must fit in 64 bits", field=path)
        if isinstance(v, dict):
            stack.extend((x, f"{path}.{k}") for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{path}.{i}") for i, x in enumerate(v))


def page_cards(engine: Engine, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
    """One ListCards page over ``engine``'s served cards, in id order, after ``cursor`` (the same rule for the
    embedded KB, the server and a snapshot): ``page_size`` in 1..500, cursors are opaque tokens from an earlier
    page, and a cursor stays valid while cards are added or removed. 0 means the default (50), as on the wire."""
    page_size = page_size or 50
    if not 1 <= page_size <= 500:
        raise InvalidArgument(f"page_size must be in 1..500, got {page_size}", field="page_size")
    after = _decode_cursor(cursor)
    mask = engine.filter_mask(filter)
    ids = sorted(c.id for c, ok in zip(engine.cards, mask, strict=True) if ok)
    start = bisect.bisect_right(ids, after) if after else 0
    page = ids[start:start + page_size]
    nxt = encode_cursor(page[-1]) if start + page_size < len(ids) else ""
    return CardPage(cards=[engine.cards[engine.pos[i]] for i in page], next_cursor=nxt, total=len(ids))


def encode_cursor(last_id: str) -> str:
    """The ListCards cursor that continues after ``last_id``."""
    return base64.urlsafe_b64encode(json.dumps({"after": last_id}).encode()).decode()


def _decode_cursor(cursor: str) -> str:
    if not cursor:
        return ""
    try:
        return str(json.loads(base64.urlsafe_b64decode(cursor.encode()))["after"])
    except (ValueError, KeyError, TypeError) as e:  # bad base64 / JSON / UTF-8 (ValueError), no "after", not a dict
        raise InvalidArgument("cursor is not one returned by ListCards; pass '' for the first page",
                              field="cursor") from e
