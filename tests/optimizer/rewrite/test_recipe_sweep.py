"""Every card recipe on every candidate the H200 campaign captured: it refuses (NotApplicable, with a reason) or
it writes source with no undefined name. The campaign found a rewrite that passed ``META[...]`` from the host; a
name check over all captured candidates catches that class before a GPU round is spent on it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchmarks import _data
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

ROOT = Path(__file__).resolve().parents[3]


def _recipes() -> dict[str, dict]:
    out = {}
    for f in sorted((ROOT / "kb" / "cards" / "patterns").glob("*.yaml")):
        card = yaml.safe_load(f.read_text())
        if (recipe := (card.get("rewrite") or {}).get("recipe")) is not None:
            out[card["id"]] = recipe
    return out


def _candidates() -> list[Path]:
    files = sorted((ROOT / "benchmarks" / "suite").glob("*/initial.py"))
    # stored as data, packed (benchmarks/_data.py)
    files += _data.glob(ROOT / "benchmarks" / "results" / "suite", "*/session/round_*.py.txt")
    seen: set[str] = set()
    return [f for f in files if not ((t := _data.read_text(f)) in seen or seen.add(t))]


def _ruff() -> str:
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(exe).exists():
        pytest.fail("ruff (dev dependency group) is not installed: run scripts/setup-env.sh")
    return exe


def test_every_recipe_refuses_or_writes_defined_names(tmp_path: Path) -> None:
    recipes, cands = _recipes(), _candidates()
    assert len(recipes) >= 20 and len(cands) >= 40  # the sweep is not vacuous
    written: dict[str, str] = {}
    for i, cand in enumerate(cands):
        src = _data.read_text(cand)
        for cid, recipe in recipes.items():
            try:
                res = apply_recipe(recipe, RecipeContext(source=src, filename=cand.name.removesuffix(".txt"), bottleneck="memory_bound"))
            except NotApplicable as exc:
                assert str(exc), f"{cid} on {cand}: a refusal must say why"
                continue
            name = f"c{i:03d}_{cid.replace('-', '_')}.py"
            (tmp_path / name).write_text(res.source)
            written[name] = f"{cid} on {cand.relative_to(ROOT)}"
    assert len(written) >= 200
    r = subprocess.run([_ruff(), "check", "--no-cache", "--isolated", "--select", "F821", "--output-format", "concise",
                        str(tmp_path)], capture_output=True, text=True, check=False)
    bad = [ln for ln in r.stdout.splitlines() if ".py:" in ln]
    assert r.returncode in (0, 1) and not bad, "\n".join(f"{written[Path(ln.split(':')[0]).name]}: {ln}" for ln in bad[:10])
