"""Proposal review transitions, approval cards, and the layering rule."""

from __future__ import annotations

import ast
import pathlib

import pytest
from synth_builders import NOW, card

from kb.errors import Conflict, InvalidArgument
from kb.models import Evidence
from synthesis import Proposal, card_on_approval


def _proposal(kind="new_family"):
    c = card("split-k", "Split-K for skinny GEMM", "Split K across programs when output tiles are few.",
             "split the K loop", status="proposed", provenance={"origin": "synthesized", "rounds": ["t#1"]},
             evidence=[{"kind": "trajectory", "text": "1.8x", "source": "t#1"}])
    return Proposal(id="new-family.split-k.abc", kind=kind, card=c, confidence=0.8, created_at=NOW)


def test_transitions():
    p = _proposal()
    a = p.transition("approved", reviewer="ana", notes="good", at=NOW)
    assert a.status == "approved" and a.reviewer == "ana" and p.status == "pending"
    with pytest.raises(Conflict):
        a.transition("rejected", reviewer="ana")
    with pytest.raises(InvalidArgument):
        p.transition("rejected", reviewer="")
    assert p.transition("rejected", reviewer="b").transition("pending", reviewer="b").status == "pending"


def test_card_on_approval_activates_or_merges():
    p = _proposal()
    assert card_on_approval(p).status == "active"
    fam = card("split-k-gemm", "Split-K GEMM", "Existing split-K family card for GEMMs.", "split K")
    merged = card_on_approval(p, into=fam)
    assert merged.id == "split-k-gemm" and merged.version == 2 and merged.provenance.rounds == ["t#1"]
    assert [e.source for e in merged.evidence] == ["t#1"]


def test_synthesis_imports_only_kb_and_libraries():
    root = pathlib.Path(__file__).resolve().parents[2] / "synthesis"
    bad = []
    for f in root.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            bad += [f"{f.name}: {n}" for n in names if n.split(".")[0] in ("retrieval", "optimizer", "grpc")]
    assert bad == []


def test_example_approval_rebases_on_the_current_card():
    base = card("rows-per-program", "Rows per program", "Several rows per program for short rows.", "ROWS rows")
    draft_a = base.model_copy(update={"evidence": [Evidence(kind="trajectory", text="x", source="a#1")], "version": 2})
    draft_b = base.model_copy(update={"evidence": [Evidence(kind="trajectory", text="x", source="b#1")], "version": 2})
    pa = Proposal(id="example.rows.a", kind="example", card=draft_a, confidence=0.9, base_version=1, created_at=NOW)
    pb = Proposal(id="example.rows.b", kind="example", card=draft_b, confidence=0.9, base_version=1, created_at=NOW)
    after_a = card_on_approval(pa, into=base)
    after_b = card_on_approval(pb, into=after_a)
    assert [e.source for e in after_b.evidence] == ["a#1", "b#1"] and after_b.version == 3

