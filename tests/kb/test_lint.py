from __future__ import annotations

from pathlib import Path

import yaml

from kb.lint import lint_dir


def test_packaged_cards_lint_clean():
    problems, n = lint_dir()
    assert n >= 2
    assert problems == []


def _write(d: Path, name: str, **kw) -> None:
    data = {"id": name, "kind": "pattern", "title": "Same title", "summary": "A summary long enough.",
            "body": "b", "backends": ["cuda"], "levels": ["L1"], "sources": ["https://x.org"],
            "symptoms": {"code_features": ["tl.dot"]}, "rewrite": {"description": "do it"}}
    data.update(kw)
    (d / f"{name}.yaml").write_text(yaml.safe_dump(data))


def test_lint_finds_each_kind_of_problem(tmp_path: Path):
    _write(tmp_path, "a-card")
    _write(tmp_path, "b-card", sources=[], related=["missing-card"])
    _write(tmp_path, "c-card", title="Other", backends=["gpu"])
    _write(tmp_path, "d-card", title="Inv", kind="invariant", rewrite=None, question_templates=["at {where}?"])
    problems, n = lint_dir(tmp_path)
    got = {(p["file"], p["field"]) for p in problems}
    assert n == 4
    assert ("b-card.yaml", "title") in got or ("a-card.yaml", "title") in got
    assert ("b-card.yaml", "sources") in got
    assert ("b-card.yaml", "related") in got
    assert any(f == "c-card.yaml" and "backends" in fld for f, fld in got)
    assert ("d-card.yaml", "question_templates") in got and ("d-card.yaml", "passes") in got
