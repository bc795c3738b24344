"""The optional LLM polish step, with a fake OpenAI-compatible client."""

from __future__ import annotations

import json
from types import SimpleNamespace

from synth_builders import NOW, card

from synthesis import LLMSettings, Proposal, polish_proposals


class FakeClient:
    def __init__(self, answer: str):
        self.answer, self.calls = answer, []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, **kw):
        self.calls.append(kw)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=self.answer))])


def _p(kind="new_family"):
    c = card("split-k", "split the K loop", "Seen in 3 rounds; geomean lift 1.80x.", "split the K loop",
             status="proposed", evidence=[{"kind": "trajectory", "text": "1.8x", "source": "t#1"}])
    return Proposal(id="new-family.split-k.abc", kind=kind, card=c, confidence=0.8, created_at=NOW)


def test_polish_changes_prose_only():
    ans = {"title": "Split-K for skinny GEMMs", "summary": "Split the K loop across programs when tiles are few.",
           "id": "hijacked", "rewrite_description": "Each program reduces one K slice."}
    cli = FakeClient(json.dumps(ans))
    (p,) = polish_proposals([_p()], client=cli, settings=LLMSettings(model="m"))
    assert p.polished and p.card.title == "Split-K for skinny GEMMs" and p.card.id == "split-k"
    assert p.card.rewrite.description == "Each program reduces one K slice."
    assert p.card.evidence[0].source == "t#1" and cli.calls[0]["model"] == "m"


def test_bad_answers_keep_the_draft():
    for bad in ("not json", json.dumps({"summary": "short"}), json.dumps(["x"])):
        (p,) = polish_proposals([_p()], client=FakeClient(bad))
        assert not p.polished and p.card == _p().card and p.reviewer_notes.startswith("polish skipped")


def test_only_drafted_kinds_are_sent():
    cli = FakeClient("{}")
    (p,) = polish_proposals([_p(kind="example")], client=cli)
    assert cli.calls == [] and p == _p(kind="example")
