"""launch_loop_grid: one launch per host-loop iteration -> one launch with the loop as a grid axis."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.recipes.appliers import NotApplicable, RecipeContext, apply_recipe

DIAG = Path(__file__).parents[3] / "benchmarks" / "diagnosis"
RECIPE = {"kind": "launch_loop_grid", "params": {}}


def _apply(item: str, source: str | None = None):
    return apply_recipe(RECIPE, RecipeContext(source=source or (DIAG / item / "initial.py").read_text(), launches=[]))


@pytest.mark.parametrize(("item", "grid", "axis"), [
    ("moe_expert_loop", "grid = (triton.cdiv(C, BLOCK_M), triton.cdiv(F, BLOCK_N), E,)", 2),  # 2-D tiles per expert
    ("layernorm_row_loop", "layernorm_row_kernel[(1, M,)]", 1),  # one program per row, rows by the loop
])
def test_the_loop_becomes_a_grid_axis_and_validates(item: str, grid: str, axis: int, tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    res = _apply(item)
    assert grid in res.source and f"tl.program_id({axis}).to(tl.int64)" in res.source
    assert "for e in range" not in res.source and "for i in range" not in res.source
    assert ".stride(0)" in res.source and res.applied == {"axis": axis}
    path = tmp_path / "fused.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(DIAG / item), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def test_a_docstring_stays_first_and_a_strided_batch_validates(tmp_path: Path) -> None:
    """A 3-D batch walked by the loop, with the kernel's docstring kept above the prologue."""
    from rewrite_support import same_outputs

    res = apply_recipe(RECIPE, RecipeContext(source=(Path(__file__).parent / "kernels" / "scale_loop.py").read_text()))
    body = res.source.split("def scale_kernel")[1]
    assert body.index('"""Scale one row."""') < body.index("loop_it = tl.program_id(1)")
    same_outputs("scale_loop", res.source, tmp_path)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("        for e in range(E):\n", "        for e in range(0, E):\n", "not `for v in range"),
    ("x[e], self.W[e], out[e], C, D, F,", "x[e], self.W[e], out[e], C + e * 0, D, F,", "other than as a whole slice"),
    ("        for e in range(E):\n", "        for e in range(E):\n            pass\n", "holds more than the launch"),
])
def test_refusals(old: str, new: str, reason: str) -> None:
    src = (DIAG / "moe_expert_loop" / "initial.py").read_text()
    changed = src.replace(old, new)
    assert changed != src
    with pytest.raises(NotApplicable, match=reason):
        _apply("moe_expert_loop", changed)
    with pytest.raises(NotApplicable, match="nested in another loop"):
        _apply("head_softmax_loop")
