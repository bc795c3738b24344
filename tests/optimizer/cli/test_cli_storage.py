"""Issue 32, item 7: storage faults. A zero-byte or corrupt kb.sqlite3 is reported in one line with the recovery
command (never re-seeded by a read command, never a traceback); ``kb export --salvage`` saves every readable card
of a damaged store; writer.lock and export/snapshot destinations are never written through a symlink; any CLI
error is one line."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kb.errors import StorageError
from optimizer.cli import app

runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for k in ("LADDER_SNAPSHOT", "LADDER_HOME", "LADDER_TOKEN", "LADDER_DEBUG"):
        monkeypatch.delenv(k, raising=False)


def _one_line_error(res, code: int = 2) -> str:
    assert res.exit_code == code, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error (")]
    assert len(errors) == 1 and "Traceback" not in res.output, res.output
    assert all(line.startswith(("error (", "KB:")) for line in lines), res.output
    return errors[0]


@pytest.fixture
def home(tmp_path: Path, seeded_home: Path) -> Path:
    h = tmp_path / "kb"
    shutil.copytree(seeded_home, h, ignore=shutil.ignore_patterns("writer.lock"))
    db = sqlite3.connect(h / "kb.sqlite3")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return h


@pytest.mark.parametrize("cmd", [["kb", "stats"], ["query", "argmax ties"], ["kb", "export", "OUT"]])
def test_a_zero_byte_store_is_reported_not_reseeded(home, tmp_path, cmd):
    (home / "kb.sqlite3").write_bytes(b"")
    for extra in ("kb.sqlite3-wal", "kb.sqlite3-shm"):
        (home / extra).unlink(missing_ok=True)
    args = [a.replace("OUT", str(tmp_path / "out")) for a in cmd]
    line = _one_line_error(runner.invoke(app, [*args, "--home", str(home)]))
    assert "empty (0 bytes)" in line and "--salvage" in line
    assert (home / "kb.sqlite3").stat().st_size == 0


def _corrupt_card_pages(db_path: Path) -> int:
    """Overwrite some of card_versions' leaf pages with garbage; returns how many."""
    db = sqlite3.connect(db_path)
    page = db.execute("PRAGMA page_size").fetchone()[0]
    leaves = [r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name='card_versions' AND pagetype='leaf' "
                                       "ORDER BY pageno")]
    db.close()
    assert len(leaves) > 6
    hit = leaves[len(leaves) // 2: len(leaves) // 2 + 2]
    with open(db_path, "r+b") as f:
        for p in hit:
            f.seek((p - 1) * page)
            f.write(b"\xde\xad\xbe\xef" * (page // 4))
    return len(hit)


def test_a_corrupt_page_is_one_line_and_salvage_saves_the_rest(home, tmp_path):
    from kb.cardfiles import load_dir

    total = len(load_dir())
    _corrupt_card_pages(home / "kb.sqlite3")
    for cmd in (["kb", "stats"], ["kb", "export", str(tmp_path / "plain")], ["query", "argmax"]):
        line = _one_line_error(runner.invoke(app, [*cmd, "--home", str(home)]))
        assert "(storage)" in line and "--salvage" in line, line
    res = runner.invoke(app, ["kb", "export", str(tmp_path / "saved"), "--salvage", "--home", str(home), "--json"])
    assert res.exit_code == 0, res.output
    saved = len(list((tmp_path / "saved").rglob("*.yaml")))
    import json

    report = json.loads(res.stdout)
    assert report["exported"] == saved and report["unreadable_rows"] > 0
    assert total * 0.5 < saved < total  # every readable card, and only those


def test_a_symlinked_writer_lock_is_refused_and_its_target_kept(home, tmp_path):
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (home / "writer.lock").unlink(missing_ok=True)
    (home / "writer.lock").symlink_to(victim)
    with pytest.raises(StorageError) as e:
        KnowledgeBase.open(Settings(home=home))
    assert "symbolic link" in e.value.message and victim.read_text() == "precious"
    line = _one_line_error(runner.invoke(app, ["kb", "rebuild", "--home", str(home)]))
    assert "symbolic link" in line and victim.read_text() == "precious"


def test_export_and_snapshot_never_write_through_symlinks(home, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    (out / "patterns").mkdir(parents=True)
    from kb.cardfiles import load_dir

    first = next(c for c in load_dir() if c.kind == "pattern")
    (out / "patterns" / f"{first.id}.yaml").symlink_to(victim)
    res = runner.invoke(app, ["kb", "export", str(out), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert victim.read_text() == "precious" and not (out / "patterns" / f"{first.id}.yaml").is_symlink()

    linked = tmp_path / "linked"
    (linked).mkdir()
    (linked / "anti_signals").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    line = _one_line_error(runner.invoke(app, ["kb", "export", str(linked), "--home", str(home)]))
    assert "symbolic link" in line and not (tmp_path / "elsewhere").exists()

    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "cards.jsonl").symlink_to(victim)
    res = runner.invoke(app, ["kb", "snapshot", str(snap), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert victim.read_text() == "precious" and not (snap / "cards.jsonl").is_symlink()


def test_an_unexpected_error_is_one_line(home, monkeypatch):
    import kb.service

    def boom(*a, **kw):
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(kb.service.KnowledgeBase, "stats", boom)
    line = _one_line_error(runner.invoke(app, ["kb", "stats", "--home", str(home)]), code=1)
    assert "(internal)" in line and "RuntimeError" in line and "LADDER_DEBUG" in line


def test_bad_settings_are_one_line(home, monkeypatch):
    monkeypatch.setenv("LADDER_PORT", "not-a-port")
    line = _one_line_error(runner.invoke(app, ["kb", "stats", "--home", str(home)]))
    assert "port" in line


def test_a_command_exit_is_not_an_error():
    """typer.Exit is a RuntimeError (not click's Exit): the catch-all must pass it through (`ladder serve`
    exits with typer.Exit(0) after SIGTERM)."""
    import typer

    from optimizer.cli._common import friendly_errors

    @friendly_errors
    def done() -> None:
        raise typer.Exit(0)

    with pytest.raises(typer.Exit):
        done()
