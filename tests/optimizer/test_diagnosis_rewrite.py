"""``diagnose(..., rewrite=True)`` / ``ladder diagnose --rewrite``: the rewrite a round would make, as a diff."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

from optimizer.diagnosis import RewritePreview, rewrite_preview, diagnose

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def test_preview_is_the_chosen_familys_rewrite(client, tmp_path: Path) -> None:
    folder = ROOT / "benchmarks" / "suite" / "swiglu"
    cand = folder / "naive.py"
    d = diagnose(folder, cand, backend="interpreter", max_level="L4", kb=client, workdir=tmp_path, validate=False,
                 rewrite=True)
    rw = d.rewrite
    assert isinstance(rw, RewritePreview) and d.chosen is not None
    assert not rw.refused, rw.refused
    assert rw.family == d.chosen.id and rw.kind == (d.chosen.recipe or {}).get("kind")
    assert rw.points >= 1 and rw.diff.startswith("--- a/naive.py")
    assert rw.source != cand.read_text()
    ast.parse(rw.source)
    assert "rewrite" in d.model_dump(mode="json")


def test_no_preview_unless_asked(client, tmp_path: Path) -> None:
    d = diagnose(ROOT / "tests" / "optimizer" / "data" / "top2", None, backend="interpreter", max_level="L1", kb=client,
                 workdir=tmp_path, validate=False)
    assert d.rewrite is None


def test_preview_without_a_family_says_why() -> None:
    outcome = SimpleNamespace(chosen=None, stop=None, results=[], summary=lambda: "")
    rw = rewrite_preview(SimpleNamespace(), outcome)
    assert rw.refused.startswith("the ladder chose no family") and not rw.diff
