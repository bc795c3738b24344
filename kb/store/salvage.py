"""Read every card that can still be read from a damaged KB store (``ladder kb export --salvage``).

One corrupt page used to make ``kb export`` (the recovery path) fail as a whole. ``salvage`` opens the file
read-only (no writer lock, nothing written), tries the served-card join first and, when SQLite reports damage,
reads ``card_versions`` row by row, skipping the rows it cannot read. For each card id it keeps the served
version when the ``cards`` table still says which one that is, else the highest readable active version, else
the highest readable version.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from kb.errors import StorageError
from kb.models import AnyCard, parse_card

__all__ = ["SalvageReport", "salvage"]

_PROBE_LIMIT = 1_000_000  # rowids probed one by one when even max(rowid) cannot be read


@dataclass
class SalvageReport:
    cards: list[AnyCard] = field(default_factory=list)
    unreadable_rows: int = 0  # card_versions rows SQLite could not read (or not parse)
    method: str = "join"  # "join": the store read normally; "rows": read row by row around damage


def salvage(path: Path) -> SalvageReport:
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        raise StorageError(f"{path} holds no KB store to salvage (missing or empty); restore it from a backup")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError as e:
        raise StorageError(f"{path} cannot be opened at all ({e}); restore it from a backup") from e
    try:
        try:
            rows = db.execute("SELECT v.doc FROM cards c JOIN card_versions v ON v.id=c.id "
                              "AND v.version=c.served_version ORDER BY c.id").fetchall()
            report = SalvageReport(method="join")
            for (doc,) in rows:
                try:
                    report.cards.append(parse_card(json.loads(doc)))
                except ValueError:
                    report.unreadable_rows += 1
            return report
        except sqlite3.DatabaseError:
            return _row_by_row(db)
    finally:
        db.close()


def _served(db: sqlite3.Connection) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for cid, v in db.execute("SELECT id, served_version FROM cards"):
            out[str(cid)] = int(v)
    except sqlite3.DatabaseError:
        pass  # keep what was read before the damage
    return out


def _row_by_row(db: sqlite3.Connection) -> SalvageReport:
    report = SalvageReport(method="rows")
    served = _served(db)
    try:
        top = int(db.execute("SELECT max(rowid) FROM card_versions").fetchone()[0] or 0)
    except sqlite3.DatabaseError:
        top = _PROBE_LIMIT
    found: dict[str, list[AnyCard]] = {}
    misses = 0
    for rowid in range(1, top + 1):
        try:
            row = db.execute("SELECT doc FROM card_versions WHERE rowid=?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            report.unreadable_rows += 1
            continue
        if row is None:
            misses += 1
            if top == _PROBE_LIMIT and misses > 10_000:  # past the end of the table
                break
            continue
        misses = 0
        try:
            card = parse_card(json.loads(row[0]))
        except ValueError:
            report.unreadable_rows += 1
            continue
        found.setdefault(card.id, []).append(card)
    for cid in sorted(found):
        versions = sorted(found[cid], key=lambda c: c.version)
        pick = next((c for c in versions if c.version == served.get(cid)), None)
        pick = pick or next((c for c in reversed(versions) if c.status == "active"), versions[-1])
        report.cards.append(pick)
    return report
