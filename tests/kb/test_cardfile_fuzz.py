"""Property-based fuzzing of curated card files (issue 8.1): whatever bytes a ``*.yaml`` holds, loading it
either yields a card or raises ``CardFileError`` naming the field, and ``lint_dir`` reports it as a problem;
no other exception escapes."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.cardfiles import CardFileError, load_card_file, load_dir
from kb.errors import InvalidArgument
from kb.lint import lint_dir

FUZZ = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}
BASES = [c.model_dump(mode="json", exclude_defaults=True) | {"id": c.id, "kind": c.kind} for c in load_dir()[::9]]

leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
values = st.recursive(leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                      max_leaves=8)


@st.composite
def mutated_cards(draw: st.DrawFn) -> str:
    """A valid card with a few top-level or nested values replaced, removed or added, as YAML."""
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(sorted(doc) + ["unknown_field"]))
        action = draw(st.sampled_from(["replace", "delete", "nest"]))
        if action == "delete":
            doc.pop(key, None)
        elif action == "nest" and isinstance(doc.get(key), dict) and doc[key]:
            doc[key][draw(st.sampled_from(sorted(doc[key])))] = draw(values)
        else:
            doc[key] = draw(values)
    return yaml.safe_dump(doc, allow_unicode=True)


NASTY = [
    b"", b"\xff\xfe\x00garbage", b"id: [unclosed", b"- just\n- a list\n", b"42", b"!!python/object:os.system 'ls'\n",
    b"id: &a x\nkind: *a\n", b"[" * 5000 + b"]" * 5000, b"{" * 3000, b"id: " + "\u00e9".encode("latin-1"),
    b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\npreconditions: [*d, *d]\n",
    b"kind: pattern\n" + b"x" * 100_000, b"\x00\x01\x02", b"id: x\nid: y\n", b"? [complex, key]\n: value\n",
]
files = st.one_of(mutated_cards().map(str.encode), st.sampled_from(NASTY), st.binary(max_size=300),
                  st.text(max_size=300).map(str.encode))


def _check_one(path: Path) -> None:
    try:
        load_card_file(path)
    except CardFileError as e:
        assert e.field, f"CardFileError without a field: {e}"
        assert str(path) in e.message or path.name in e.message, f"the message does not name the file: {e}"


def test_card_files_fail_only_with_card_file_error(tmp_path: Path):
    @settings(max_examples=300, **FUZZ)
    @given(files)
    def run(content: bytes) -> None:
        path = tmp_path / "fz-card.yaml"
        path.write_bytes(content)
        _check_one(path)

    run()


def test_lint_dir_reports_every_bad_file(tmp_path: Path):
    @settings(max_examples=25, **FUZZ)
    @given(st.lists(files, min_size=1, max_size=4))
    def run(contents: list[bytes]) -> None:
        root = tmp_path / "cards"
        if root.exists():
            for f in root.iterdir():
                f.unlink()
        root.mkdir(exist_ok=True)
        for i, content in enumerate(contents):
            (root / f"fz-{i}.yaml").write_bytes(content)
        problems, n = lint_dir(root)
        assert n == len(contents)
        assert all(p["field"] and p["message"] for p in problems), problems

    run()


def test_a_directory_named_like_a_card_file(tmp_path: Path):
    (tmp_path / "fz-dir.yaml").mkdir()
    problems, n = lint_dir(tmp_path)
    assert n == 1 and problems and problems[0]["file"] == "fz-dir.yaml"


@pytest.mark.parametrize("name", ["missing", "a" * 5000])
def test_lint_of_a_missing_directory_is_an_error(tmp_path: Path, name: str):
    with pytest.raises(InvalidArgument) as e:
        lint_dir(tmp_path / name)
    assert e.value.field == "path"
