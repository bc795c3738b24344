"""The cause records in the structured store (schema version 5): every version of every cause, kept.

Table ``causes``: one row per (id, version); the latest version is the record, and a status change updates it in
place (as a card version's status does). ``source`` says who wrote the version: ``seed`` (the package's seed,
``kb.causes``), ``upsert`` or ``review``. Seeding adds missing seed causes and refreshes a seed cause only while its
latest version is still the seeded one, so a cause a curator changed is never overwritten by the package.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any

from kb.errors import Conflict, NotFound
from kb.models.cause import CauseRecord
from kb.vocab import STATUS_TRANSITIONS, CardStatus

__all__ = ["CAUSES_SCHEMA", "CauseStore", "add_causes", "put_cause_version"]

CAUSES_SCHEMA = """
CREATE TABLE IF NOT EXISTS causes (
  id TEXT NOT NULL, version INTEGER NOT NULL, status TEXT NOT NULL, source TEXT NOT NULL, doc TEXT NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (id, version));
"""
_LATEST = "version = (SELECT max(u.version) FROM causes u WHERE u.id = c.id)"
#: a cause whose latest version has one of these statuses may be cited by a trajectory or a card
CITABLE = ("active", "proposed", "deprecated")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _event(db: sqlite3.Connection, cause_id: str, action: str, detail: dict[str, Any]) -> None:
    db.execute("INSERT INTO events(ts, card_id, action, detail) VALUES(?,?,?,?)",
               (_now(), f"cause:{cause_id}", action, json.dumps(detail)))


def _latest(db: sqlite3.Connection, cause_id: str) -> tuple[CauseRecord, str] | None:
    row = db.execute("SELECT doc, source FROM causes c WHERE id=? AND " + _LATEST, (cause_id,)).fetchone()
    return (CauseRecord.model_validate_json(row[0]), row[1]) if row else None


def put_cause_version(db: sqlite3.Connection, cause: CauseRecord, source: str) -> CauseRecord:
    """Store ``cause`` as the next version of its id (version 1 for a new id), inside the caller's transaction."""
    current = _latest(db, cause.id)
    stored = cause.model_copy(update={"version": current[0].version + 1 if current else 1})
    db.execute("INSERT INTO causes(id, version, status, source, doc, created_at) VALUES(?,?,?,?,?,?)",
               (stored.id, stored.version, stored.status, source, stored.model_dump_json(), _now()))
    _event(db, stored.id, source, {"version": stored.version, "status": stored.status})
    return stored


def _seed(db: sqlite3.Connection, seeds: Iterable[CauseRecord]) -> int:
    written = 0
    for cause in seeds:
        current = _latest(db, cause.id)
        if current is None or (current[1] == "seed" and current[0].model_dump(exclude={"version"})
                               != cause.model_dump(exclude={"version"})):
            put_cause_version(db, cause, "seed")
            written += 1
    return written


def add_causes(db: sqlite3.Connection) -> None:
    """Migration 5: the causes table, seeded with ``kb.causes.SEED_CAUSES`` (the causes that were a ``Literal`` in
    code). Idempotent, and it touches no other table: cards, trajectories and proposals stay as they were."""
    from kb.causes import SEED_CAUSES

    db.execute(CAUSES_SCHEMA)  # one statement: executescript would commit the migration's transaction
    _seed(db, SEED_CAUSES)


class CauseStore:
    """Cause methods of ``StructuredStore`` (which provides ``_tx`` and ``_q``)."""

    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]  # both provided by StructuredStore
    _q: Callable[..., list[tuple[Any, ...]]]

    def causes(self, statuses: Iterable[str] = ()) -> list[CauseRecord]:
        """The latest version of every cause, in id order; only those with one of ``statuses`` when given."""
        wanted = set(statuses)
        rows = self._q("SELECT doc, status FROM causes c WHERE " + _LATEST + " ORDER BY id")
        return [CauseRecord.model_validate_json(doc) for doc, status in rows if not wanted or status in wanted]

    def citable_causes(self) -> frozenset[str]:
        """Ids a trajectory or a card may cite: every cause but the rejected and draft ones."""
        marks = ",".join("?" * len(CITABLE))
        return frozenset(r[0] for r in self._q(f"SELECT id FROM causes c WHERE {_LATEST} AND status IN ({marks})",
                                               CITABLE))

    def get_cause(self, cause_id: str) -> CauseRecord:
        rows = self._q("SELECT doc FROM causes c WHERE id=? AND " + _LATEST, (cause_id,))
        if not rows:
            raise NotFound(f"cause {cause_id!r} does not exist; list them with `ladder kb causes`", field="id")
        return CauseRecord.model_validate_json(rows[0][0])

    def cause_versions(self, cause_id: str) -> list[CauseRecord]:
        return [CauseRecord.model_validate_json(r[0])
                for r in self._q("SELECT doc FROM causes WHERE id=? ORDER BY version", (cause_id,))]

    def put_cause(self, cause: CauseRecord, *, source: str = "upsert") -> CauseRecord:
        with self._tx() as db:
            return put_cause_version(db, cause, source)

    def seed_causes(self, seeds: Iterable[CauseRecord]) -> int:
        """Add missing seed causes; refresh those still as seeded. Returns how many versions were written."""
        with self._tx() as db:
            return _seed(db, seeds)

    def set_cause_status(self, cause_id: str, status: CardStatus, *, reason: str = "") -> CauseRecord:
        """Move a cause's latest version through review (``kb.vocab.STATUS_TRANSITIONS``)."""
        with self._tx() as db:
            current = _latest(db, cause_id)
            if current is None:
                raise NotFound(f"cause {cause_id!r} does not exist", field="id")
            cause = current[0]
            if status != cause.status and status not in STATUS_TRANSITIONS[cause.status]:
                allowed = ", ".join(sorted(STATUS_TRANSITIONS[cause.status])) or "none"
                raise Conflict(f"cause {cause_id!r} v{cause.version} is {cause.status}; it can move to: {allowed}",
                               field="status")
            updated = cause.model_copy(update={"status": status})
            db.execute("UPDATE causes SET status=?, doc=? WHERE id=? AND version=?",
                       (status, updated.model_dump_json(), cause_id, cause.version))
            _event(db, cause_id, "status", {"version": cause.version, "status": status, "reason": reason})
            return updated
