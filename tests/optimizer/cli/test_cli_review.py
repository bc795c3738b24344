"""``ladder synthesize`` and ``ladder review ...`` against a real server (the CLI's --server transport)."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from kb.models import (
    PatternCard,
    ProblemRef,
    Round,
    RoundRewrite,
    Timing,
    TimingProtocol,
    Trajectory,
    Validation,
)
from kb.settings import Settings
from optimizer.cli import app
from synthesis.models import EvidenceRef, Proposal

TOKENS = {"contrib-token-0123456789": ["contributor"], "review-token-0123456789": {"name": "ana", "roles": ["reviewer"]}}
runner = CliRunner()


@pytest.fixture(scope="module")
def server(tmp_path_factory, seeded_home, embedder):
    from kb.service import KnowledgeBase
    from retrieval.server.app import create_server

    home = tmp_path_factory.mktemp("cli-review") / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0)
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0")
    assert handle.wait_ready(60)
    yield handle
    handle.stop(0)


def _ladder(server, *args: str, token: str = "review-token-0123456789", ok: bool = True):
    res = runner.invoke(app, [*args, "--server", f"127.0.0.1:{server.port}", "--token", token])
    if ok:
        assert res.exit_code == 0, res.output
    return res


def _traj() -> Trajectory:
    proto = TimingProtocol(method="do_bench-median")
    rounds = [Round(index=0, outcome="baseline", validation=Validation(passed=True),
                    timing=Timing(protocol=proto, geomean_speedup=1.0)),
              Round(index=1, levels_reached=["L1", "L2"], hypothesis="Each program handles one short row; "
                    "the grid is launch bound", cards_cited=["rows-per-program"],
                    rewrite=RoundRewrite(family="rows-per-program", description="8 rows per program in a loop"),
                    validation=Validation(passed=True), timing=Timing(protocol=proto, geomean_speedup=2.2),
                    outcome="improved")]
    return Trajectory(id="cli-synth-1", problem=ProblemRef(name="softmax_rows"), backend="cuda", rounds=rounds)


def test_synthesize_submits_and_reports(server, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(_traj().model_dump_json())
    out = json.loads(_ladder(server, "synthesize", str(path), "--json").stdout)
    assert out["submitted"] == {"cli-synth-1": True} and out["report"]["trajectories"] >= 1
    human = _ladder(server, "synthesize", str(path)).output
    assert "already stored: cli-synth-1" in human and "synthesis report" in human
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "x"}')
    res = _ladder(server, "synthesize", str(bad), ok=False)
    assert res.exit_code == 2 and "bad.json" in res.output


def test_review_commands(server, tmp_path):
    family = next(c for c in server.kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
    card = PatternCard(id="cli-rows-loop", title="Chunked row loop for tiny rows", status="proposed",
                       summary="Loop over a chunk of rows per program so that tiny rows stop being launch bound.",
                       body="## Why\nTiny rows leave the grid launch bound.", backends=["cuda"], levels=["L1"],
                       rewrite={"description": "ROWS-per-program loop."})
    p = Proposal(id="new-family.cli-rows.0001", kind="new_family", card=card, confidence=0.7,
                 target_family=family.id, evidence=[EvidenceRef(round_ref="t9#3", problem="softmax", speedup=1.93)])
    merge_me = p.model_copy(update={"id": "example.cli-merge.0001", "kind": "example"})
    for x in (p, merge_me):
        server.kb.store.put_proposal(x.id, x.status, x.model_dump(mode="json"))

    listed = json.loads(_ladder(server, "review", "list", "--json").stdout)
    assert p.id in [x["id"] for x in listed]
    assert p.id in _ladder(server, "review", "list").output
    shown = json.loads(_ladder(server, "review", "show", p.id, "--json").stdout)
    assert shown["nearest"]["id"] == family.id and shown["proposal"]["evidence"][0]["speedup"] == 1.93
    human = _ladder(server, "review", "show", p.id).output
    assert "nearest family" in human and "1.930" in human and "t9#3" in human

    res = _ladder(server, "review", "reject", p.id, "--reason", " ", ok=False)
    assert res.exit_code == 2 and "reason" in res.output
    res = _ladder(server, "review", "approve", p.id, token="contrib-token-0123456789", ok=False)
    assert res.exit_code == 2 and "reviewer" in res.output

    draft = tmp_path / "draft.yaml"
    draft.write_text(yaml.safe_dump(card.model_copy(update={"title": "Rows per program loop"}).model_dump(mode="json")))
    _ladder(server, "review", "edit", p.id, "--file", str(draft))
    assert server.curator.proposal(p.id).card.title == "Rows per program loop"
    done = json.loads(_ladder(server, "review", "approve", p.id, "--reviewer", "ana", "--json").stdout)
    assert done["proposal"]["status"] == "approved" and done["proposal"]["reviewer"] == "ana"
    served = server.kb.get_card("cli-rows-loop")
    assert served.status == "active" and served.title == "Rows per program loop"

    # editing an active card queues a new version; the old one stays served until approval
    edited = tmp_path / "edited.json"
    edited.write_text(served.model_copy(update={"summary": "Process a chunk of rows per program; the grid "
                                                           "shrinks by the chunk size."}).model_dump_json())
    queued = json.loads(_ladder(server, "review", "edit", "cli-rows-loop", "--file", str(edited), "--json").stdout)
    assert queued["proposal"]["kind"] == "edit" and queued["proposal"]["base_version"] == served.version
    assert server.kb.get_card("cli-rows-loop").summary == served.summary
    _ladder(server, "review", "approve", queued["proposal"]["id"])
    now = server.kb.get_card("cli-rows-loop")
    assert now.version == served.version + 1 and now.summary.startswith("Process a chunk")

    merged = json.loads(_ladder(server, "review", "merge", merge_me.id, "--json").stdout)  # into the nearest
    assert merged["proposal"]["status"] == "merged"
    assert server.kb.get_card(family.id).version == family.version + 1


def test_synthesize_with_a_contributor_token_stores_and_exits_zero(server, tmp_path):
    f = tmp_path / "contrib.json"
    f.write_text(_traj().model_copy(update={"id": "cli-contrib-1", "device": "contrib"}).model_dump_json())
    res = _ladder(server, "synthesize", str(f), token="contrib-token-0123456789")  # exit 0 asserted
    assert "submitted: cli-contrib-1" in res.stdout and "not run" in res.stderr and "reviewer" in res.stderr
    assert any(t.id == "cli-contrib-1" for t in server.kb.store.trajectories())


def test_kb_commands_take_server_and_token(server, tmp_path):
    stats = json.loads(_ladder(server, "kb", "stats", "--json").stdout)
    assert stats["cards"] == len(server.kb.store.served_cards()) and stats["kb"].startswith("server ")
    res = _ladder(server, "kb", "export", str(tmp_path / "exported"), "--json")
    assert json.loads(res.stdout)["exported"] == stats["cards"]
    assert len(list((tmp_path / "exported").glob("*/*.yaml"))) == stats["cards"]
