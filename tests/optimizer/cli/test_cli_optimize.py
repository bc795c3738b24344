"""``ladder diagnose`` / ``ladder optimize`` (``optimizer.cli.optimize``), mounted on a throwaway Typer app."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import typer
from ladder_fakes import LADDER_CARDS, FakeKB
from typer.testing import CliRunner

from optimizer.cli import optimize

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    kb = FakeKB(LADDER_CARDS)
    monkeypatch.setattr(optimize, "connect_kb", lambda server, home, token=None: kb)
    monkeypatch.setenv("LADDER_VALIDATION_SEEDS", "[0]")
    a = typer.Typer()
    a.command("diagnose")(optimize.diagnose_command)
    a.command("optimize")(optimize.optimize_command)
    return a


def test_diagnose_json_levels(app: typer.Typer) -> None:
    res = CliRunner().invoke(app, ["diagnose", str(DATA / "softmax"), "--backend", "interpreter", "--max-level", "L2", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["validation"]["passed"] and d["timing"]["protocol"]["method"] == "unavailable-interpreter"
    assert [lv["level"] for lv in d["levels"]] == ["L1", "L2"]
    l1, l2 = d["levels"]
    assert set(l1["tests"]) >= {"localized", "single_family", "justified"} and l1["matched_cards"][0]["id"] == "rows-per-program-test"
    assert not l1["tests"]["localized"] and l2["bottleneck"] == "unknown" and not l2["tests"]["localized"]
    assert d["stop"] is None and d["chosen"] is None and d["summary"].startswith("inconclusive")
    assert any(e["kind"] == "escalation_tests" for e in l2["evidence"])


def test_diagnose_rewrite_flag_reports_why_there_is_none(app: typer.Typer) -> None:
    """No level passes its tests on the fake KB: --rewrite says there is no rewrite and why (text and JSON)."""
    res = CliRunner().invoke(app, ["diagnose", str(DATA / "softmax"), "--backend", "interpreter", "--max-level", "L2",
                                   "--rewrite"])
    assert res.exit_code == 0, res.output
    assert "rewrite: none (the ladder chose no family" in " ".join(res.output.split())
    js = CliRunner().invoke(app, ["diagnose", str(DATA / "softmax"), "--backend", "interpreter", "--max-level", "L2",
                                  "--rewrite", "--json"])
    rw = json.loads(js.stdout)["rewrite"]
    assert rw["refused"].startswith("the ladder chose no family") and rw["diff"] == ""


def _preview_diagnosis(cand: Path, source: str):
    from kb.models import Timing, TimingProtocol, Validation
    from optimizer.diagnosis import Diagnosis, RewritePreview, patch_path
    from optimizer.rewrite.context import unified_diff

    name = patch_path(cand)
    return Diagnosis(problem="p", candidate=cand, backend="interpreter", validation=Validation(passed=True),
                     timing=Timing(protocol=TimingProtocol(method="unavailable-interpreter")), summary="stop at L1",
                     rewrite=RewritePreview(family="f", kind="k", description="d", source=source, points=1,
                                            diff=unified_diff(cand.read_text(), source, name, name)))


def test_diagnose_rewrite_prints_a_patch_that_applies_and_out_writes_it(app: typer.Typer, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 item 7: the diff is printed verbatim (no wrapping at 80 columns when stdout is not a terminal) and
    applies with `patch -p1`; --out writes the rewritten candidate, never over the candidate itself."""
    import optimizer.diagnosis as diagnosis

    monkeypatch.chdir(tmp_path)
    cand = tmp_path / "kern.py"
    long_line = "    y = " + " + ".join(f"x{i}" for i in range(40)) + "\n"  # 200+ columns
    cand.write_text("def f(x):\n    y = x\n    return y\n")
    new = cand.read_text().replace("    y = x\n", long_line)
    monkeypatch.setattr(diagnosis, "diagnose", lambda *a, **k: _preview_diagnosis(cand, new))
    res = CliRunner().invoke(app, ["diagnose", str(cand), "--rewrite", "--backend", "interpreter"])
    assert res.exit_code == 0, res.output
    assert "+" + long_line in res.stdout  # one line, as long as it is
    patch = res.stdout[res.stdout.index("--- a/kern.py"):]
    (tmp_path / "fix.patch").write_text(patch)
    subprocess.run(["patch", "-p1", "-i", "fix.patch"], cwd=tmp_path, check=True, capture_output=True)
    assert cand.read_text() == new
    cand.write_text("def f(x):\n    y = x\n    return y\n")
    out = tmp_path / "sub" / "kern_fixed.py"
    res = CliRunner().invoke(app, ["diagnose", str(cand), "--rewrite", "--backend", "interpreter", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.read_text() == new and "wrote the rewritten candidate" in res.output
    res = CliRunner().invoke(app, ["diagnose", str(cand), "--rewrite", "--backend", "interpreter", "--out", str(cand)])
    assert res.exit_code != 0 and "is the candidate itself" in res.output
    assert cand.read_text() == "def f(x):\n    y = x\n    return y\n"  # untouched
    res = CliRunner().invoke(app, ["diagnose", str(cand), "--backend", "interpreter", "--out", str(out)])
    assert res.exit_code != 0 and "add --rewrite" in res.output


def test_diagnose_text_and_failing_candidate(app: typer.Typer) -> None:
    res = CliRunner().invoke(app, ["diagnose", str(DATA / "softmax" / "problem.py"), "--candidate", str(DATA / "faulty" / "nan.py"),
                                   "--backend", "interpreter", "--max-level", "L1"])
    assert res.exit_code == 1 and "does not validate" in res.output
    bad = CliRunner().invoke(app, ["diagnose", str(DATA / "softmax"), "--max-level", "L9"])
    assert bad.exit_code != 0


def test_optimize_zero_rounds(app: typer.Typer, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["optimize", str(DATA / "softmax"), "--backend", "interpreter", "--rounds", "0",
                                   "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    traj = json.loads(res.stdout)
    assert traj["rounds"][0]["outcome"] == "baseline" and traj["best_round"] == 0 and (tmp_path / "trajectory.json").exists()
    missing = CliRunner().invoke(app, ["optimize", str(tmp_path / "nope.py"), "--backend", "interpreter"])
    assert missing.exit_code == 2 and "not found" in missing.output
