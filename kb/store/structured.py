"""The structured store: SQLite in WAL mode, the single source of truth for cards, versions, review states,
trajectories and synthesis proposals. The Chroma index is derived from it and can always be rebuilt.

Durability: every acknowledged write is one committed transaction with ``synchronous=FULL``, so a
``kill -9`` right after the call returns loses nothing. Only one process may open a KB for writing; the
writer holds an exclusive ``flock`` on ``writer.lock`` for its lifetime, and a second writer gets a clear
``Unavailable`` error (open it read-only, or talk to the server).
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kb.errors import Conflict, NotFound, StorageError, Unavailable
from kb.evidence import evidence_key
from kb.models import AnyCard, CauseRecord, Trajectory, parse_card
from kb.safe_io import open_lock
from kb.store.causes import CAUSES_SCHEMA, CauseStore, add_causes, put_cause_version
from kb.vocab import STATUS_TRANSITIONS, CardStatus

__all__ = ["StructuredStore", "recovery_hint"]

#: 2: trajectories.content_hash (copies of one trajectory count once); 3: query indexes; 4: content_hash is the
#: evidence key (kb.evidence: problem, candidates, times, outcomes; a copy with other prose is still a copy);
#: 5: the causes table, seeded with the causes that were a Literal in kb.vocab (kb.store.causes)
SCHEMA_VERSION = 5
#: the tables as a fresh store gets them; a store written by an older version walks _MIGRATIONS on open
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS card_versions (
  id TEXT NOT NULL, version INTEGER NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
  doc TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id, version));
CREATE TABLE IF NOT EXISTS cards (
  id TEXT PRIMARY KEY, served_version INTEGER NOT NULL, latest_version INTEGER NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, card_id TEXT, action TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS trajectories (
  id TEXT PRIMARY KEY, doc TEXT NOT NULL, submitted_at TEXT NOT NULL, synthesized INTEGER NOT NULL DEFAULT 0,
  content_hash TEXT);
CREATE TABLE IF NOT EXISTS proposals (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, doc TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL, doc TEXT NOT NULL, updated_at TEXT NOT NULL);
""" + CAUSES_SCHEMA


def _add_content_hash(db: sqlite3.Connection) -> None:
    cols = {r[1] for r in db.execute("PRAGMA table_info(trajectories)").fetchall()}
    if "content_hash" not in cols:
        db.execute("ALTER TABLE trajectories ADD COLUMN content_hash TEXT")
    rows = db.execute("SELECT id, doc FROM trajectories WHERE content_hash IS NULL").fetchall()
    db.executemany("UPDATE trajectories SET content_hash=? WHERE id=?",
                   [(evidence_key(Trajectory.model_validate_json(doc)), tid) for tid, doc in rows])
    db.execute("CREATE INDEX IF NOT EXISTS trajectories_by_hash ON trajectories(content_hash)")


def _rekey_evidence(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT id, doc FROM trajectories").fetchall()
    db.executemany("UPDATE trajectories SET content_hash=? WHERE id=?",
                   [(evidence_key(Trajectory.model_validate_json(doc)), tid) for tid, doc in rows])


def _add_query_indexes(db: sqlite3.Connection) -> None:
    # the queue's status pages, the unsynthesized-trajectory scan and a card's last action
    db.execute("CREATE INDEX IF NOT EXISTS proposals_by_status ON proposals(status, created_at, id)")
    db.execute("CREATE INDEX IF NOT EXISTS trajectories_by_state ON trajectories(synthesized, submitted_at, id)")
    db.execute("CREATE INDEX IF NOT EXISTS events_by_card ON events(card_id, seq)")


#: version -> the step that takes a store from version - 1 to it (one transaction with the version bump; every
#: step is idempotent, so a fresh store, created at version 1's row, walks them all harmlessly)
_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {2: _add_content_hash, 3: _add_query_indexes,
                                                                4: _rekey_evidence, 5: add_causes}


def recovery_hint(path: Path) -> str:
    """The one-line recovery command for a damaged store at ``path``."""
    return (f"save every readable card with `ladder kb export --salvage DIR --home {path.parent}`, then move "
            f"{path} aside (`ladder serve --home {path.parent}` then starts a fresh KB seeded with the curated cards)")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class StructuredStore(CauseStore):
    """SQLite-backed store. Thread-safe within one process (one connection, serialised by a lock)."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock = threading.RLock()
        self._lock_fd: int | None = None
        if self.path.is_file() and self.path.stat().st_size == 0:  # never seed over it: it was a KB once
            raise StorageError(f"the KB store {self.path} is empty (0 bytes): it was truncated or never written. "
                               f"Restore it from a backup or {recovery_hint(self.path)}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not readonly:
                self._acquire_writer_lock()
            uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA busy_timeout=30000")
            if not readonly:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '1')")
            self._check_schema()
            if not readonly:  # the writer (the server) checks the pages once, so damage shows at start-up
                res = self._db.execute("PRAGMA quick_check").fetchone()
                if res and res[0] != "ok":
                    raise sqlite3.DatabaseError(f"integrity check failed: {res[0]}")
        except StorageError:  # a schema version this code cannot serve, a linked lock: nothing was changed
            if hasattr(self, "_db"):
                self._db.close()
            self._release_writer_lock()
            raise
        except sqlite3.DatabaseError as e:
            if hasattr(self, "_db"):
                self._db.close()
            self._release_writer_lock()
            raise StorageError(f"the KB store {self.path} is damaged ({e}): {recovery_hint(self.path)}") from e
        except OSError as e:
            self._release_writer_lock()
            raise StorageError(f"cannot create the KB directory {self.path.parent}: {e}") from e

    # ------------------------------------------------------------------ schema version
    def _check_schema(self) -> None:
        """Read the stored schema version; migrate an older store (writers), refuse a newer one."""
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        found = int(row[0]) if row else 1
        if found > SCHEMA_VERSION:
            raise StorageError(f"the KB store at {self.path} has schema version {found}, newer than this "
                               f"kernel-ladder's {SCHEMA_VERSION}: upgrade kernel-ladder to open it")
        if found == SCHEMA_VERSION:
            return
        if self.readonly:
            raise StorageError(f"the KB store at {self.path} has schema version {found} (this kernel-ladder "
                               f"uses {SCHEMA_VERSION}): open it once for writing (e.g. `ladder serve`) to migrate it")
        for version in range(found + 1, SCHEMA_VERSION + 1):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                _MIGRATIONS[version](self._db)
                self._db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
                self._db.execute("COMMIT")
            except BaseException:  # transaction boundary: roll back on any failure, then re-raise it unchanged
                self._db.execute("ROLLBACK")
                raise

    def schema_version(self) -> int:
        return int(self.get_meta("schema_version") or 1)

    # ------------------------------------------------------------------ locking / lifecycle
    def _acquire_writer_lock(self) -> None:
        lock_path = self.path.parent / "writer.lock"
        fd = open_lock(lock_path)  # never through a symlink: a linked lock would have its target overwritten
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 64).decode(errors="replace").strip() or "another process"
            finally:
                os.close(fd)
            raise Unavailable(
                f"the KB at {self.path.parent} is already open for writing by pid {holder}; only one writer "
                "(the server) may own a KB home. Use `--server HOST:PORT` to go through it, or open read-only."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd

    def _release_writer_lock(self) -> None:
        if self._lock_fd is not None:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            finally:
                os.close(self._lock_fd)
                self._lock_fd = None

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            finally:
                self._release_writer_lock()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        if self.readonly:
            raise Unavailable("this KB was opened read-only; writes go through the server (`--server HOST:PORT`)")
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as e:  # transaction boundary: roll back on any failure, re-raise it (as StorageError)
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(e, sqlite3.OperationalError) and "full" in str(e).lower():
                    raise StorageError(
                        f"the disk holding {self.path} is full; nothing was written. Free space and retry."
                    ) from e
                if isinstance(e, sqlite3.DatabaseError):
                    raise StorageError(f"KB store error ({e}); the transaction was rolled back") from e
                raise

    def _q(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.DatabaseError as e:  # a damaged page: say how to recover, never a traceback
                raise StorageError(f"the KB store {self.path} is damaged ({e}): {recovery_hint(self.path)}") from e

    # ------------------------------------------------------------------ meta
    def get_meta(self, key: str) -> str | None:
        rows = self._q("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                       (key, value))

    def generation(self) -> int:
        """A counter that grows with every card write; the index compares it to know if it is stale."""
        rows = self._q("SELECT coalesce(max(seq), 0) FROM cards")
        return int(rows[0][0])

    # ------------------------------------------------------------------ cards
    def count_cards(self) -> int:
        return int(self._q("SELECT count(*) FROM cards")[0][0])

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        if version is None:
            rows = self._q("SELECT v.doc FROM cards c JOIN card_versions v ON v.id=c.id AND v.version=c.served_version "
                           "WHERE c.id=?", (card_id,))
        else:
            rows = self._q("SELECT doc FROM card_versions WHERE id=? AND version=?", (card_id, version))
        if not rows:
            what = f"card {card_id!r}" + (f" version {version}" if version else "")
            raise NotFound(f"{what} does not exist; list ids with `ladder kb export` or ListCards", field="id")
        return parse_card(json.loads(rows[0][0]))

    def versions(self, card_id: str) -> list[AnyCard]:
        rows = self._q("SELECT doc FROM card_versions WHERE id=? ORDER BY version", (card_id,))
        return [parse_card(json.loads(r[0])) for r in rows]

    def latest_version(self, card_id: str) -> int | None:
        rows = self._q("SELECT latest_version FROM cards WHERE id=?", (card_id,))
        return int(rows[0][0]) if rows else None

    def served_cards(self) -> list[AnyCard]:
        """The version of every card that search serves (the approved one while an edit awaits review)."""
        rows = self._q("SELECT v.doc FROM cards c JOIN card_versions v ON v.id=c.id AND v.version=c.served_version "
                       "ORDER BY c.id")
        return [parse_card(json.loads(r[0])) for r in rows]

    def iter_served_docs(self) -> Iterator[tuple[str, int, str]]:
        """(id, version, json) of served cards, streamed (for large KBs)."""
        yield from self._q("SELECT c.id, c.served_version, v.doc FROM cards c JOIN card_versions v "
                           "ON v.id=c.id AND v.version=c.served_version ORDER BY c.id")

    def put_card(self, card: AnyCard, *, action: str = "upsert") -> AnyCard:
        """Store ``card`` as a new version. Returns the stored card (with its version).

        A new id is served at once. A new version of a card whose served version is active stays pending
        (served stays the old one) until it is approved with ``set_status(..., "active")``.
        """
        with self._tx() as db:
            return self._put_card(db, card, action)

    def set_status(self, card_id: str, status: CardStatus, *, version: int | None = None, reason: str = "") -> AnyCard:
        """Move a card version through review. Approving (active) makes that version the served one."""
        with self._tx() as db:
            return self._set_status(db, card_id, status, version, reason)

    def _put_card(self, db: sqlite3.Connection, card: AnyCard, action: str) -> AnyCard:
        row = db.execute("SELECT served_version, latest_version FROM cards WHERE id=?", (card.id,)).fetchone()
        seq = self._next_seq(db)
        if row is None:
            stored = card.model_copy(update={"version": 1})
            self._insert_version(db, stored)
            db.execute("INSERT INTO cards(id, served_version, latest_version, seq) VALUES(?,?,?,?)",
                       (card.id, 1, 1, seq))
        else:
            served_v, latest_v = row
            served_status = db.execute("SELECT status FROM card_versions WHERE id=? AND version=?",
                                       (card.id, served_v)).fetchone()[0]
            stored = card.model_copy(update={"version": latest_v + 1})
            self._insert_version(db, stored)
            new_served = served_v if served_status == "active" and stored.status != "active" else stored.version
            if new_served != served_v and stored.status == "active":
                self._retire(db, card.id, served_v)  # an approved new version replaces the old: one active version
            db.execute("UPDATE cards SET served_version=?, latest_version=?, seq=? WHERE id=?",
                       (new_served, stored.version, seq, card.id))
        self._event(db, card.id, action, {"version": stored.version, "status": stored.status})
        return stored

    @staticmethod
    def _retire(db: sqlite3.Connection, card_id: str, version: int) -> None:
        """Mark ``version`` of ``card_id`` deprecated if it is active (a newer version was approved)."""
        row = db.execute("SELECT doc FROM card_versions WHERE id=? AND version=?", (card_id, version)).fetchone()
        if row is None:
            return
        old = parse_card(json.loads(row[0]))
        if old.status == "active":
            old = old.model_copy(update={"status": "deprecated"})
            db.execute("UPDATE card_versions SET status=?, doc=? WHERE id=? AND version=?",
                       ("deprecated", old.model_dump_json(), card_id, version))

    def _set_status(self, db: sqlite3.Connection, card_id: str, status: CardStatus, version: int | None,
                    reason: str) -> AnyCard:
        row = db.execute("SELECT served_version, latest_version FROM cards WHERE id=?", (card_id,)).fetchone()
        if row is None:
            raise NotFound(f"card {card_id!r} does not exist", field="id")
        served_v, latest_v = row
        v = version or latest_v
        got = db.execute("SELECT doc FROM card_versions WHERE id=? AND version=?", (card_id, v)).fetchone()
        if got is None:
            raise NotFound(f"card {card_id!r} has no version {v} (latest is {latest_v})", field="version")
        card = parse_card(json.loads(got[0]))
        if status != card.status and status not in STATUS_TRANSITIONS[card.status]:
            allowed = ", ".join(sorted(STATUS_TRANSITIONS[card.status])) or "none"
            raise Conflict(f"card {card_id!r} v{v} is {card.status}; it can move to: {allowed}", field="status")
        updated = card.model_copy(update={"status": status})
        db.execute("UPDATE card_versions SET status=?, doc=? WHERE id=? AND version=?",
                   (status, updated.model_dump_json(), card_id, v))
        new_served = served_v
        if status == "active":
            new_served = v
            if served_v != v:  # the previously served version is superseded
                self._retire(db, card_id, served_v)
        elif v == served_v or new_served == v:
            new_served = served_v
        db.execute("UPDATE cards SET served_version=?, seq=? WHERE id=?", (new_served, self._next_seq(db), card_id))
        self._event(db, card_id, "status", {"version": v, "status": status, "reason": reason})
        return updated

    @staticmethod
    def _event(db: sqlite3.Connection, card_id: str | None, action: str, detail: dict[str, Any]) -> None:
        db.execute("INSERT INTO events(ts, card_id, action, detail) VALUES(?,?,?,?)",
                   (_now(), card_id, action, json.dumps(detail)))

    @staticmethod
    def _next_seq(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT coalesce(max(seq), 0) + 1 FROM cards").fetchone()[0])

    @staticmethod
    def _insert_version(db: sqlite3.Connection, card: AnyCard) -> None:
        db.execute("INSERT INTO card_versions(id, version, kind, status, doc, created_at) VALUES(?,?,?,?,?,?)",
                   (card.id, card.version, card.kind, card.status, card.model_dump_json(), _now()))

    def last_action(self, card_id: str) -> str | None:
        """The action (seed, upsert, status, ...) of the latest event on a card."""
        rows = self._q("SELECT action FROM events WHERE card_id=? ORDER BY seq DESC LIMIT 1", (card_id,))
        return rows[0][0] if rows else None

    def events(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._q("SELECT seq, ts, card_id, action, detail FROM events ORDER BY seq DESC LIMIT ?", (limit,))
        return [{"seq": s, "ts": t, "card_id": c, "action": a, "detail": json.loads(d or "{}")}
                for s, t, c, a, d in rows]

    # ------------------------------------------------------------------ trajectories
    def put_trajectory(self, trajectory: Trajectory) -> bool:
        """Store a trajectory; idempotent by id. Returns True when it adds new evidence: False if that id was
        already stored (nothing changes), or if the same evidence (``kb.evidence.evidence_key``: problem,
        candidates, times, outcomes; prose aside) is already stored under another id (the copy is kept,
        acknowledged, but counts once: see ``trajectories(unique=True)``)."""
        digest = evidence_key(trajectory)
        with self._tx() as db:
            known = db.execute("SELECT 1 FROM trajectories WHERE content_hash=? LIMIT 1", (digest,)).fetchone()
            cur = db.execute("INSERT OR IGNORE INTO trajectories(id, doc, submitted_at, content_hash) VALUES(?,?,?,?)",
                             (trajectory.id, trajectory.model_dump_json(), _now(), digest))
            return cur.rowcount == 1 and known is None

    def get_trajectory(self, trajectory_id: str) -> Trajectory:
        rows = self._q("SELECT doc FROM trajectories WHERE id=?", (trajectory_id,))
        if not rows:
            raise NotFound(f"trajectory {trajectory_id!r} was never submitted", field="trajectory_id")
        return Trajectory.model_validate_json(rows[0][0])

    #: the first stored copy of each content hash (rowid order is submission order)
    _FIRST_COPY = "rowid = (SELECT min(u.rowid) FROM trajectories u WHERE u.content_hash = t.content_hash)"

    def trajectories(self, *, only_new: bool = False, unique: bool = False) -> list[Trajectory]:
        """Stored trajectories in submission order. ``unique``: one per content hash (the first copy stored), the
        evidence synthesis counts; ``only_new``: not yet synthesized."""
        where = [w for w, on in (("t.synthesized=0", only_new), (self._FIRST_COPY, unique)) if on]
        sql = ("SELECT t.doc FROM trajectories t" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY t.submitted_at, t.id")
        return [Trajectory.model_validate_json(r[0]) for r in self._q(sql)]

    def trajectory_copies(self) -> dict[str, int]:
        """Trajectory id (of the first copy) -> how many stored trajectories share its content, for those with
        more than one."""
        rows = self._q("SELECT t.id, (SELECT count(*) FROM trajectories u WHERE u.content_hash = t.content_hash) "
                       f"FROM trajectories t WHERE {self._FIRST_COPY}")
        return {tid: int(n) for tid, n in rows if n > 1}

    def count_trajectories(self, *, unique: bool = False) -> int:
        if unique:
            return int(self._q("SELECT count(DISTINCT content_hash) FROM trajectories")[0][0])
        return int(self._q("SELECT count(*) FROM trajectories")[0][0])

    def mark_synthesized(self, ids: list[str]) -> None:
        with self._tx() as db:
            db.executemany("UPDATE trajectories SET synthesized=1 WHERE id=?", [(i,) for i in ids])

    # ------------------------------------------------------------------ proposals and jobs (synthesis)
    def put_proposal(self, proposal_id: str, status: str, doc: dict[str, Any]) -> None:
        now = _now()
        with self._tx() as db:
            db.execute("INSERT INTO proposals(id, status, doc, created_at, updated_at) VALUES(?,?,?,?,?) "
                       "ON CONFLICT(id) DO UPDATE SET status=excluded.status, doc=excluded.doc, "
                       "updated_at=excluded.updated_at", (proposal_id, status, json.dumps(doc), now, now))

    def decide_proposal(self, proposal_id: str, *, expect: str, status: str, doc: dict[str, Any],
                        card: AnyCard | None = None, deprecate: str | None = None, reason: str = "",
                        fresh_id: bool = False, deprecate_version: int | None = None,
                        cause: CauseRecord | None = None) -> AnyCard | None:
        """Apply a review decision in one transaction: the card write it implies (``card`` stored as a new
        version, or the served version of ``deprecate`` deprecated), the proposal's new state and doc, and a
        ``review`` event. The proposal must still be in state ``expect``; otherwise (decided meanwhile, or by a
        retry of a call whose reply was lost) nothing is written and ``Conflict`` says who decided it. A crash
        anywhere before the commit leaves the proposal as it was and no card version behind.

        ``fresh_id``: ``card`` is a new card (a new family or anti-signal); if its id is taken meanwhile (another
        proposal with the same id was approved first), it is stored under the first free ``<id>-<k>`` and the
        proposal's doc says so, never as a new version of the card that holds the id.
        ``deprecate_version``: the version a deprecation was reviewed on; the served version must still be it.
        ``cause``: a new cause record (a ``new_cause`` proposal) stored in the same transaction; it names the card
        among its families under the id the card was stored as, and if its own id was taken meanwhile it is stored
        under the first free ``<id>_<k>`` (the proposal's doc says so)."""
        with self._tx() as db:
            row = db.execute("SELECT status, doc FROM proposals WHERE id=?", (proposal_id,)).fetchone()
            if row is None:
                raise NotFound(f"proposal {proposal_id!r} does not exist; see `ladder review list`",
                               field="proposal_id")
            if row[0] != expect:
                who = json.loads(row[1]).get("reviewer") or "someone"
                raise Conflict(f"proposal {proposal_id} is already {row[0]} (by {who}); nothing was changed",
                               field="status")
            stored = None
            drafted = card.id if card is not None else None
            if card is not None and fresh_id:
                base, k = card.id, 2
                while db.execute("SELECT 1 FROM cards WHERE id=?", (card.id,)).fetchone() is not None:
                    card, k = card.model_copy(update={"id": f"{base[:90]}-{k}"}), k + 1
                if card.id != base:
                    note = f"stored as {card.id}: {base} was already taken by another card"
                    doc = {**doc, "card": {**doc.get("card", {}), "id": card.id},
                           "reviewer_notes": "; ".join(x for x in (doc.get("reviewer_notes"), note) if x)}
            if cause is not None:
                cause, doc = self._fresh_cause(db, cause, drafted, card.id if card is not None else None, doc)
                put_cause_version(db, cause, "review")
            if card is not None:
                stored = self._put_card(db, card, "upsert")
            elif deprecate is not None:
                served = db.execute("SELECT served_version FROM cards WHERE id=?", (deprecate,)).fetchone()
                if deprecate_version is not None and served is not None and served[0] != deprecate_version:
                    raise Conflict(f"{deprecate} is served at v{served[0]}, not the v{deprecate_version} this "
                                   "deprecation was proposed on; reject it and let synthesis re-check the new "
                                   "version", field="base_version")
                stored = self._set_status(db, deprecate, "deprecated", served[0] if served else None, reason)
            db.execute("UPDATE proposals SET status=?, doc=?, updated_at=? WHERE id=?",
                       (status, json.dumps(doc), _now(), proposal_id))
            detail: dict[str, Any] = {"proposal_id": proposal_id, "status": status}
            if stored is not None:
                detail["version"] = stored.version
            self._event(db, stored.id if stored else None, "review", detail)
            return stored

    @staticmethod
    def _fresh_cause(db: sqlite3.Connection, cause: CauseRecord, drafted: str | None, card_id: str | None,
                     doc: dict[str, Any]) -> tuple[CauseRecord, dict[str, Any]]:
        """``cause`` under an id no cause holds, naming its card by the id it is stored as (``card_id``, where the
        draft said ``drafted``)."""
        if card_id and drafted and drafted != card_id:
            cause = cause.model_copy(update={"families": [card_id if f == drafted else f for f in cause.families]})
        base, k = cause.id, 2
        while db.execute("SELECT 1 FROM causes WHERE id=?", (cause.id,)).fetchone() is not None:
            cause, k = cause.model_copy(update={"id": f"{base[:44]}_{k}"}), k + 1
        note = f"cause stored as {cause.id}: {base} was already taken" if cause.id != base else ""
        doc = {**doc, "cause": cause.model_dump(mode="json"),
               "reviewer_notes": "; ".join(x for x in (doc.get("reviewer_notes"), note) if x)}
        return cause, doc

    def get_proposal(self, proposal_id: str) -> dict[str, Any]:
        rows = self._q("SELECT doc FROM proposals WHERE id=?", (proposal_id,))
        if not rows:
            raise NotFound(f"proposal {proposal_id!r} does not exist; see `ladder review list`", field="proposal_id")
        return json.loads(rows[0][0])

    def list_proposals(self, status: str | None = None) -> list[dict[str, Any]]:
        if status:
            rows = self._q("SELECT doc FROM proposals WHERE status=? ORDER BY created_at, id", (status,))
        else:
            rows = self._q("SELECT doc FROM proposals ORDER BY created_at, id")
        return [json.loads(r[0]) for r in rows]

    def proposal_page(self, status: str | None, *, after: tuple[str, str] | None = None,
                      limit: int = 100) -> list[tuple[tuple[str, str], dict[str, Any]]]:
        """Up to ``limit`` proposals in queue order (oldest first) that come after the key ``after``, each with
        its own key (created_at, id) to continue from. Keys never change, so a page boundary stays put while
        proposals are added or decided."""
        after_at, after_id = after or ("", "")
        rows = self._q("SELECT created_at, id, doc FROM proposals WHERE (?1 = '' OR status = ?1) "
                       "AND (created_at, id) > (?2, ?3) ORDER BY created_at, id LIMIT ?4",
                       (status or "", after_at, after_id, limit))
        return [((at, pid), json.loads(doc)) for at, pid, doc in rows]

    def put_job(self, job_id: str, kind: str, state: str, doc: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO jobs(id, kind, state, doc, updated_at) VALUES(?,?,?,?,?) ON CONFLICT(id) DO UPDATE "
                       "SET state=excluded.state, doc=excluded.doc, updated_at=excluded.updated_at",
                       (job_id, kind, state, json.dumps(doc), _now()))

    def get_job(self, job_id: str) -> dict[str, Any]:
        rows = self._q("SELECT doc FROM jobs WHERE id=?", (job_id,))
        if not rows:
            raise NotFound(f"job {job_id!r} does not exist", field="job_id")
        return json.loads(rows[0][0])

    def list_jobs(self, state: str | None = None) -> list[dict[str, Any]]:
        sql, args = "SELECT doc FROM jobs", tuple[str, ...]()
        if state:
            sql, args = sql + " WHERE state=?", (state,)
        return [json.loads(r[0]) for r in self._q(sql + " ORDER BY updated_at", args)]

    def commit_synthesis(self, proposals: list[tuple[str, str, dict[str, Any]]], stats: dict[str, dict[str, Any]],
                         trajectory_ids: list[str]) -> None:
        """Store a synthesis run atomically: new proposals (reviewed ones are never overwritten), refreshed card
        statistics (derived data: updated in place on the served version, no new version), and the trajectories
        marked as synthesized. A crash before the commit leaves the KB as it was; the next run redoes the batch."""
        now = _now()
        with self._tx() as db:
            for pid, status, doc in proposals:
                db.execute("INSERT INTO proposals(id, status, doc, created_at, updated_at) VALUES(?,?,?,?,?) "
                           "ON CONFLICT(id) DO UPDATE SET status=excluded.status, doc=excluded.doc, "
                           "updated_at=excluded.updated_at WHERE proposals.status='pending'",
                           (pid, status, json.dumps(doc), now, now))
            for cid, st in stats.items():
                row = db.execute("SELECT v.doc, v.version FROM cards c JOIN card_versions v ON v.id=c.id AND "
                                 "v.version=c.served_version WHERE c.id=?", (cid,)).fetchone()
                if row is None:
                    continue
                doc = json.loads(row[0])
                doc["stats"] = st
                db.execute("UPDATE card_versions SET doc=? WHERE id=? AND version=?", (json.dumps(doc), cid, row[1]))
            db.executemany("UPDATE trajectories SET synthesized=1 WHERE id=?", [(i,) for i in trajectory_ids])
            if stats:
                db.execute("UPDATE cards SET seq=? WHERE id=(SELECT min(id) FROM cards)", (self._next_seq(db),))

    def fail_interrupted_jobs(self) -> int:
        """Mark jobs left 'queued'/'running' by a crashed process as failed (called when a writer opens)."""
        rows = self._q("SELECT id, doc FROM jobs WHERE state IN ('queued', 'running')")
        for jid, doc in rows:
            d = json.loads(doc)
            d.update(state="failed", message="interrupted: the server stopped before the job finished; run it again")
            self.put_job(jid, d.get("kind", "synthesis"), "failed", d)
        return len(rows)

    def check(self) -> None:
        """Raise StorageError unless SQLite's integrity check passes."""
        res = self._q("PRAGMA quick_check")
        if res and res[0][0] != "ok":
            raise StorageError(f"KB store integrity check failed: {res[0][0]}")

