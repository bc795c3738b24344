"""``diagnose(..., rewrite=True)`` / ``ladder diagnose --rewrite``: the rewrite a round would make, as a diff."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from optimizer.diagnosis import RewritePreview, rewrite_preview, diagnose

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def test_preview_is_the_chosen_familys_rewrite(client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the patch names the candidate from the working directory
    folder = ROOT / "benchmarks" / "suite" / "swiglu"
    cand = folder / "naive.py"
    d = diagnose(folder, cand, backend="interpreter", max_level="L4", kb=client, workdir=tmp_path, validate=False,
                 rewrite=True)
    rw = d.rewrite
    assert isinstance(rw, RewritePreview) and d.chosen is not None
    assert not rw.refused, rw.refused
    assert rw.family == d.chosen.id and rw.kind == (d.chosen.recipe or {}).get("kind")
    assert rw.applied_kind == rw.kind  # the recipe itself made the point, no fallback
    # a patch of the candidate itself, named from the working directory: it applies with `git apply`
    assert rw.points >= 1 and rw.diff.startswith("--- a/benchmarks/suite/swiglu/naive.py\n+++ b/benchmarks/suite/swiglu/naive.py")
    work = tmp_path / "apply"
    (work / "benchmarks/suite/swiglu").mkdir(parents=True)
    (work / "benchmarks/suite/swiglu/naive.py").write_text(cand.read_text())
    (work / "fix.patch").write_text(rw.diff)
    subprocess.run(["git", "apply", "fix.patch"], cwd=work, check=True, capture_output=True)
    assert (work / "benchmarks/suite/swiglu/naive.py").read_text() == rw.source
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


def test_preview_names_the_launch_knob_a_composite_fell_back_to(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register-spill relief falls back to a launch search where no chunk loop applies: the preview says a launch
    knob made the point (``applied_kind``), so nothing counts it as a structural rewrite."""
    from kb.models import AppliedRecipe
    from optimizer.proposers.offline import OfflineProposer

    point = SimpleNamespace(description="num_warps 4 -> 8", diff="-a\n+b\n", source="b",
                            recipe=AppliedRecipe.of({"kind": "register_spill_relief",
                                                     "applied": {"num_warps": 8, "via": "launch_params"}}))
    monkeypatch.setattr(OfflineProposer, "variants", lambda self, ctx, outcome, **kw: [point])
    card = SimpleNamespace(id="register-spill-relief", recipe={"kind": "register_spill_relief"})
    outcome = SimpleNamespace(chosen=card, stop=SimpleNamespace(), results=[], summary=lambda: "")
    rw = rewrite_preview(SimpleNamespace(candidate=Path("k.py")), outcome)
    assert rw.kind == "register_spill_relief" and rw.applied_kind == "launch_params" and rw.points == 1
