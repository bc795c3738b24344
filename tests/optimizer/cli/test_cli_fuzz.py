"""Property-based fuzzing of CLI inputs (issue 8.1): ``ladder query`` and ``ladder kb lint`` with odd arguments end
with exit code 0, 1 or 2 and a message, never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from optimizer.cli.app import app

FUZZ = {"deadline": None, "database": None, "suppress_health_check": list(HealthCheck)}
ODD = ["", " ", "-", "--", "-x", "--json", "é", "😀", "\u202e", "a" * 5000, "../..", "%s", "'\"", "0", "-1", "1e9",
       "101", "nan"]
odd = st.one_of(st.sampled_from(ODD), st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                                     blacklist_characters="\x00"), max_size=30))


def word(valid: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from(range(3)).flatmap(lambda i: odd if i == 0 else st.sampled_from(valid))


@pytest.fixture(scope="module")
def home(tmp_path_factory, seeded_home: Path) -> Path:
    h = tmp_path_factory.mktemp("cli-fuzz") / "kb"
    shutil.copytree(seeded_home, h, ignore=shutil.ignore_patterns("writer.lock"))
    return h


@pytest.fixture(scope="module")
def runner(embedder):
    """CliRunner with the session's embedding model (each embedded query opens the KB afresh)."""
    mp = pytest.MonkeyPatch()
    mp.setattr("kb.service.Embedder", lambda *a, **kw: embedder)
    yield CliRunner()
    mp.undo()


def _check(result, args: list[str]) -> None:
    out = result.output
    assert result.exit_code in (0, 1, 2), f"{args!r} -> exit {result.exit_code}\n{out}"
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{args!r} raised {result.exception!r}\n{out}"
    assert "Traceback" not in out, f"{args!r} printed a traceback\n{out}"
    if result.exit_code == 2:
        assert out.strip(), f"{args!r} failed without saying why"


@st.composite
def query_args(draw: st.DrawFn, home: Path) -> list[str]:
    args = ["query", draw(st.one_of(st.just("softmax rows launch bound"), odd))]
    for opt, valid in (("--backend", ["cuda", "ascend", "any"]), ("--kind", ["pattern", "invariant"]),
                       ("--level", ["L1", "L3"]), ("--mode", ["hybrid", "bm25", "dense"]),
                       ("--top-k", ["1", "5", "100"])):
        if draw(st.booleans()):
            args += [opt, draw(word(valid))]
    if draw(st.booleans()):
        args.append("--json")
    server = draw(st.sampled_from([None, None, None, "127.0.0.1:1", "not a target", "unix:/nonexistent"]))
    args += ["--server", server] if server else ["--home", str(home)]
    return args


def test_query_arguments(runner, home: Path):
    @settings(max_examples=60, **FUZZ)
    @given(query_args(home))
    def run(args: list[str]) -> None:
        _check(runner.invoke(app, args), args)

    run()


def test_lint_arguments(runner, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "." and "" lint the working directory: keep it small
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "fz-bad.yaml").write_bytes(b"\xff not yaml")
    (cards / "fz-empty.yaml").write_text("")
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    paths = st.one_of(st.sampled_from([str(cards), str(a_file), str(tmp_path / "missing"), "", "."]), odd)

    @settings(max_examples=40, **FUZZ)
    @given(paths, st.booleans())
    def run(path: str, json_out: bool) -> None:
        args = ["kb", "lint", path] + (["--json"] if json_out else [])
        _check(runner.invoke(app, args), args)

    run()
    result = runner.invoke(app, ["kb", "lint", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "missing" in result.output  # a path that is not there is an error, not 0 cards

