"""The online-logsumexp recipe: a max pass plus a sum-of-exp pass become one pass that still validates."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from optimizer.kernel.features import extract_features
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

ROOT = Path(__file__).resolve().parents[2]
CE = ROOT / "benchmarks" / "suite" / "cross_entropy"
RECIPE = {"kind": "online_logsumexp", "params": {}}


def fuse(source: str) -> str:
    out = apply_recipe(RECIPE, RecipeContext(source=source)).source
    ast.parse(out)
    return out


def _kernel_loops(source: str, name: str) -> list[ast.For]:
    fn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return [s for s in fn.body if isinstance(s, ast.For)]


def test_cross_entropy_reads_each_row_once() -> None:
    src = (CE / "initial.py").read_text()
    assert len(_kernel_loops(src, "cross_entropy_rows_kernel")) == 2
    out = fuse(src)
    loops = _kernel_loops(out, "cross_entropy_rows_kernel")
    assert len(loops) == 1 and sum("tl.load" in ast.unparse(s) for s in loops[0].body) == 1
    assert "sum_exp = sum_exp * tl.exp(running_max - running_max_ref) + tl.exp(x - running_max_ref)" in out
    assert "sum_exp = sum_exp * tl.exp(running_max - row_max)" in out  # lanes brought to the row max once
    assert "two_pass_row_reduction" in extract_features(src).tokens
    assert "two_pass_row_reduction" not in extract_features(out).tokens


def test_fused_cross_entropy_validates_in_the_interpreter(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    path = tmp_path / "fused.py"
    path.write_text(fuse((CE / "initial.py").read_text()))
    ev = evaluate(load_problem(CE), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0, 1]))
    assert ev.passed, ev.reason


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("    for c0 in range(0, n_cols, BLOCK_SIZE):\n        cols = c0 + tl.arange(0, BLOCK_SIZE)\n"
     "        x = tl.load(base + cols, mask=cols < n_cols, other=float(\"-inf\"))\n        sum_exp",
     "    for c0 in range(0, n_cols, 2 * BLOCK_SIZE):\n        cols = c0 + tl.arange(0, BLOCK_SIZE)\n"
     "        x = tl.load(base + cols, mask=cols < n_cols, other=float(\"-inf\"))\n        sum_exp", "iterate differently"),
    ("        sum_exp += tl.exp(x - row_max)", "        sum_exp += tl.exp(x - row_max) * x", "sum of exp"),
    ("    row_max = tl.max(running_max, axis=0)\n",
     "    row_max = tl.max(running_max, axis=0)\n    scale = row_max * 2\n", "only row_max"),
])
def test_refusals_say_why(old: str, new: str, reason: str) -> None:
    src = (CE / "initial.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new, 1)))


def test_inline_loads_in_both_loops_fuse_and_validate(tmp_path: Path) -> None:
    """`m = tl.maximum(m, tl.load(...))` and `s += tl.exp(tl.load(...) - row_max)`: the labelled two-loop
    cross-entropy, the chunk read once under a name, checked against torch in the interpreter."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    item = Path(__file__).parents[2] / "benchmarks" / "diagnosis" / "cross_entropy_two_loops"
    res = apply_recipe({"kind": "online_logsumexp", "params": {}},
                       RecipeContext(source=(item / "initial.py").read_text(), launches=[]))
    assert "m_x = tl.load(base + cols" in res.source and res.source.count("for start in range(0, V, BLOCK):") == 1
    assert "the loaded chunk" in res.description
    path = tmp_path / "online.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(item), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def test_the_scalar_form_of_naive_cross_entropy_fuses_and_validates(tmp_path: Path) -> None:
    """`m = tl.maximum(m, tl.max(x, axis=0))` then `s += tl.sum(tl.exp(x - m), axis=0)`: scalar running values, no
    lane merge after the loop (m is already the row max)."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    src = (CE / "naive.py").read_text()
    assert len(_kernel_loops(src, "row_loss_kernel")) == 2
    out = fuse(src)
    assert len(_kernel_loops(out, "row_loss_kernel")) == 1
    assert "s = s * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)" in out
    path = tmp_path / "fused.py"
    path.write_text(out)
    ev = evaluate(load_problem(CE), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason
