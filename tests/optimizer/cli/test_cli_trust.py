"""The CLI as a careless client would use it (issue 17, items 2, 8, 9, 10): a typo in --home, a home a server
owns, a snapshot set in the environment, a busy port, an export onto a file, and hostile text in a proposal."""

from __future__ import annotations

import json
import socket

import pytest
from typer.testing import CliRunner

from kb.settings import Settings
from optimizer.cli import app
from synthesis.models import EvidenceRef, Proposal

runner = CliRunner()
HOSTILE = "softmax\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for k in ("LADDER_SNAPSHOT", "LADDER_HOME", "LADDER_TOKEN"):
        monkeypatch.delenv(k, raising=False)


def _one_line_error(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error ("), res.output
    assert "Traceback" not in res.output
    return lines[0]


@pytest.mark.parametrize("cmd", [["kb", "stats"], ["kb", "snapshot", "SNAP"], ["kb", "export", "OUT"],
                                 ["review", "list"]])
def test_a_home_that_holds_no_kb_is_refused_not_created(tmp_path, cmd):
    typo = tmp_path / "ladder-hoem"
    args = [a.replace("SNAP", str(tmp_path / "s")).replace("OUT", str(tmp_path / "o")) for a in cmd]
    line = _one_line_error(runner.invoke(app, [*args, "--home", str(typo)]))
    assert "holds no KB" in line and "ladder serve --home" in line
    assert not typo.exists()


def test_read_commands_open_read_only_while_a_server_owns_the_home(kb, kb_home):
    assert kb.store.readonly is False  # this process holds the writer lock, as `ladder serve` would
    res = runner.invoke(app, ["kb", "stats", "--home", str(kb_home), "--json"])
    assert res.exit_code == 0, res.output
    stats = json.loads(res.stdout)
    assert stats["opened"] == "read-only" and stats["cards"] == kb.stats()["cards"]
    assert "read-only" in res.stderr
    from kb.models.search import SearchQuery

    text = "why does argmax scalarize on Ascend"
    res = runner.invoke(app, ["query", text, "--home", str(kb_home), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[0]["id"] == kb.search(SearchQuery(text=text))[0].card.id


def test_ladder_snapshot_wins_over_an_empty_home_and_says_so(kb, tmp_path, monkeypatch):
    from kb.snapshot import write_snapshot

    write_snapshot(kb, tmp_path / "snap")
    empty = tmp_path / "empty-home"
    monkeypatch.setenv("LADDER_SNAPSHOT", str(tmp_path / "snap"))
    monkeypatch.setenv("LADDER_HOME", str(empty))
    res = runner.invoke(app, ["query", "argmax ties on Ascend", "--json"])
    assert res.exit_code == 0, res.output
    # the console wraps a long path (an xdist worker's tmp_path is longer): compare with whitespace removed
    assert json.loads(res.stdout) and f"snapshot{tmp_path / 'snap'}" in "".join(res.stderr.split())
    assert not (empty / "kb.sqlite3").exists()  # nothing was seeded
    res = runner.invoke(app, ["kb", "stats", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["cards"] == kb.stats()["cards"]


def test_export_onto_a_file_is_one_clean_line(kb_home, tmp_path):
    target = tmp_path / "cards.yaml"
    target.write_text("keep me")
    line = _one_line_error(runner.invoke(app, ["kb", "export", str(target), "--home", str(kb_home)]))
    assert "not a directory" in line and target.read_text() == "keep me"


def test_serve_on_a_busy_port_is_one_clean_line(kb_home):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        line = _one_line_error(runner.invoke(app, ["serve", "--home", str(kb_home), "--port", str(port)]))
    assert "cannot listen" in line and str(port) in line


def test_review_output_carries_no_terminal_escapes(kb_home):
    from kb.models import PatternCard
    from kb.service import KnowledgeBase

    card = PatternCard(id="escape-card", title=f"Rows {HOSTILE}", status="proposed", backends=["cuda"],
                       levels=["L1"], summary=f"Summary with {HOSTILE} inside it.", body=HOSTILE)
    ev = [EvidenceRef(round_ref=f"t{i}#1", problem=HOSTILE, backend="cuda", outcome="improved", speedup=1.5,
                      lift=1.5, note=HOSTILE) for i in range(30)]
    p = Proposal(id="new-family.escape-card.0001", kind="new_family", card=card, confidence=0.7, evidence=ev,
                 reason=HOSTILE)
    with KnowledgeBase.open(Settings(home=kb_home), readonly=False) as kb:
        kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
    for cmd in (["review", "show", p.id], ["review", "list"]):
        res = runner.invoke(app, [*cmd, "--home", str(kb_home)])
        assert res.exit_code == 0, res.output
        assert "\x1b" not in res.output and "\x07" not in res.output, cmd
    shown = runner.invoke(app, ["review", "show", p.id, "--home", str(kb_home)]).output
    assert "30 rounds, 1 distinct" in shown  # 30 identical rows collapsed to one with its count
