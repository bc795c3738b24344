"""The store's schema version is read on open: an older store is migrated, a newer one refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kb.errors import StorageError
from kb.store.structured import SCHEMA_VERSION, StructuredStore

V1_DUMP = Path(__file__).parent / "data" / "kb_schema_v1.sql"


def _v1_store(tmp_path: Path) -> Path:
    path = tmp_path / "kb.sqlite"
    db = sqlite3.connect(path)
    db.executescript(V1_DUMP.read_text())
    db.close()
    return path


def _indexes(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}
    finally:
        db.close()


def test_a_store_made_by_schema_1_is_migrated_on_open(tmp_path: Path):
    path = _v1_store(tmp_path)
    assert not _indexes(path)
    store = StructuredStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 5
        assert store.get_card("v1-card").title == "A card stored by schema 1"
        assert [p["id"] for p in store.list_proposals("pending")] == ["v1-proposal"]
        assert store.last_action("v1-card") == "upsert"
    finally:
        store.close()
    assert {"proposals_by_status", "trajectories_by_state", "events_by_card", "trajectories_by_hash"} <= _indexes(path)
    db = sqlite3.connect(path)
    assert "content_hash" in {r[1] for r in db.execute("PRAGMA table_info(trajectories)")}  # step 2
    db.close()
    StructuredStore(path).close()  # a second open finds the current version and changes nothing


def test_a_fresh_store_starts_at_the_current_version(tmp_path: Path):
    store = StructuredStore(tmp_path / "kb.sqlite")
    try:
        assert store.schema_version() == SCHEMA_VERSION
    finally:
        store.close()


def test_read_only_open_of_an_old_store_says_how_to_migrate(tmp_path: Path):
    path = _v1_store(tmp_path)
    with pytest.raises(StorageError, match="open it once for writing"):
        StructuredStore(path, readonly=True)


def test_a_newer_store_is_refused_and_the_writer_lock_released(tmp_path: Path):
    path = _v1_store(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StorageError, match="upgrade kernel-ladder"):
        StructuredStore(path)
    with pytest.raises(StorageError, match="upgrade kernel-ladder"):  # not "already open for writing"
        StructuredStore(path)
