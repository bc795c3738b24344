"""``ladder query`` for people: every hit's id, kind, scores, title and summary readable in an 80-column terminal."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from optimizer.cli import app


def test_query_hits_are_readable_at_80_columns(kb_home: Path) -> None:
    r = CliRunner().invoke(app, ["query", "why does argmax scalarize on Ascend", "--top-k", "3", "--home", str(kb_home)],
                           env={"COLUMNS": "80"}, terminal_width=80)
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln[:1] in ("╭", "│", "╰")]  # the hits (model loading may log too)
    assert "3 hits for: why does argmax scalarize on Ascend" in r.output
    assert lines and max(len(ln) for ln in lines) <= 80
    assert lines[0].startswith("╭─ 1. ascend-argmax-max-with-index ")  # the best hit, its id unbroken
    assert sum(ln.startswith(("╭─ 1. ", "╭─ 2. ", "╭─ 3. ")) for ln in lines) == 3
    assert "invariant · ascend · score" in r.output and "(dense " in r.output
