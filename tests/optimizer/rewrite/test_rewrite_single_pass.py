"""single_pass_fusion: a mean pass plus a squared-deviation pass become one Welford pass (interpreter-checked)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "single_pass_fusion", "params": {}}
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(("kernel", "loops"), [("twopass_var", 1), ("twopass_layernorm", 2), ("twopass_std_even", 1)])
def test_statistics_passes_fuse_into_one_welford_pass(kernel: str, loops: int, tmp_path: Path) -> None:
    before = (KERNELS / f"{kernel}.py").read_text()
    res = rewrite(kernel, RECIPE)
    assert res.applied["fusion"] == "welford"
    kernel_src = res.source.split("class ModelNew")[0]
    assert kernel_src.count("for off in") == before.split("class ModelNew")[0].count("for off in") - 1 == loops
    assert "tl.maximum(welford_count, 1.0)" in kernel_src and "# Chan merge" in kernel_src
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_online_max_sum_is_the_second_fusion() -> None:
    src = (ROOT / "benchmarks" / "suite" / "cross_entropy" / "initial.py").read_text()
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert res.applied["fusion"] == "online max/sum" and "running_max_ref" in res.source


def test_masked_lanes_without_where_are_refused_with_both_reasons() -> None:
    src = (KERNELS / "twopass_var.py").read_text().replace(
        "        d = tl.where(cols < N, x - mean, 0.0)\n        acc2 += d * d\n", "        acc2 += (x - mean) * (x - mean)\n")
    with pytest.raises(NotApplicable, match=r"welford: .*masked lanes add mean\^2.*; online max/sum: "):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_an_inline_load_sum_and_a_reused_accumulator_fuse_and_validate(tmp_path: Path) -> None:
    """`acc += tl.load(...)` (the value unnamed in the sum loop) and `acc` re-zeroed for the squared deviations:
    the labelled three-loop layernorm, checked against its torch reference in the interpreter."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe
    from optimizer.settings import LadderSettings

    item = Path(__file__).parents[3] / "benchmarks" / "diagnosis" / "layernorm_three_loops"
    res = apply_recipe({"kind": "single_pass_fusion", "params": {}},
                       RecipeContext(source=(item / "initial.py").read_text(), launches=[]))
    assert res.applied == {"fusion": "welford"}
    assert res.source.count("for start in range(0, N, BLOCK):") == 2  # the statistics pass and the output pass
    path = tmp_path / "fused.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(item), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason
