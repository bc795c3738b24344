"""grouped_program_order: a bijective in-kernel remap of the tile indices, validated in the interpreter."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

SUITE = Path(__file__).parents[2] / "benchmarks" / "suite"
RECIPE = {"kind": "grouped_program_order", "params": {"GROUP_SIZE_M": [4, 8, 16]}}


def grouped(op: str, **kw) -> object:
    return apply_recipe(RECIPE, RecipeContext(source=(SUITE / op / "initial.py").read_text(), launches=[], **kw))


def _remap(x: int, y: int, gx: int, gy: int, group: int) -> tuple[int, int]:
    """The rewrite's index arithmetic, line for line (Python ints, non-negative: // and % agree with Triton)."""
    pid = x + y * gx
    in_group = group * gy
    first_m = (pid // in_group) * group
    group_m = min(gx - first_m, group)
    return first_m + (pid % in_group) % group_m, (pid % in_group) // group_m


@pytest.mark.parametrize(("gx", "gy", "group"), [(1, 1, 8), (7, 3, 8), (32, 32, 8), (33, 5, 4), (5, 40, 16), (64, 1, 8)])
def test_remap_visits_every_tile_once(gx: int, gy: int, group: int) -> None:
    seen = [_remap(x, y, gx, gy, group) for x, y in itertools.product(range(gx), range(gy))]
    assert sorted(seen) == sorted(itertools.product(range(gx), range(gy)))


def test_rewrite_keeps_grid_and_host_and_adds_the_group_size() -> None:
    res = grouped("matmul")
    src = res.source
    assert "_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)" in src
    assert "pid_m = _first_m + (_pid % _in_group) % _group_m" in src and "GROUP_SIZE_M=8" in src
    assert "grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))" in src  # host code untouched
    assert res.applied == {"GROUP_SIZE_M": 8}
    assert grouped("matmul", tried=[{"GROUP_SIZE_M": 8}]).applied == {"GROUP_SIZE_M": 4}
    with pytest.raises(NotApplicable, match="already has GROUP_SIZE_M"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=[]))
    with pytest.raises(NotApplicable, match="no tl.dot"):
        grouped("softmax")


@pytest.mark.parametrize("op", ["matmul", "batched_matmul"])
def test_grouped_candidates_validate_in_the_interpreter(op: str, tmp_path: Path) -> None:
    """16x16 tiles so the small interpreter shapes span several tiles per axis, and groups of 2 that do not
    divide them: the remap is really exercised, tails included."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    src = (SUITE / op / "initial.py").read_text()
    small = src.replace("BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32", "BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 16")
    assert small != src
    res = apply_recipe({"kind": "grouped_program_order", "params": {"GROUP_SIZE_M": [2]}},
                       RecipeContext(source=small, launches=[]))
    path = tmp_path / "grouped.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(SUITE / op), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


DIAG = Path(__file__).parents[2] / "benchmarks" / "diagnosis"


@pytest.mark.parametrize(("item", "blocks", "walk"), [
    ("lm_head_linear_bf16", "BLOCK_M, BLOCK_N, BLOCK_K = 64, 128, 64", "row-major"),
    ("matmul_tall_bf16", "BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64", "column-major"),
])
def test_a_split_1d_program_id_is_grouped_and_validates(item: str, blocks: str, walk: str, tmp_path: Path) -> None:
    """The 1-D form (``pid_m = pid // n``, ``pid_n = pid % n`` or the column-major twin) on 16x16 tiles with
    groups of 2, in the interpreter against the torch reference."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    src = (DIAG / item / "initial.py").read_text()
    small = src.replace(blocks, "BLOCK_M, BLOCK_N, BLOCK_K = 16, 16, 16")
    assert small != src
    res = apply_recipe({"kind": "grouped_program_order", "params": {"GROUP_SIZE_M": [2]}},
                       RecipeContext(source=small, launches=[]))
    assert walk in res.description and "_n_m" in res.source and "GROUP_SIZE_M=2" in res.source
    path = tmp_path / "grouped.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(DIAG / item), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def test_a_1d_grid_that_is_not_a_tile_product_is_refused() -> None:
    src = (DIAG / "lm_head_linear_bf16" / "initial.py").read_text()
    padded = src.replace("grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)",
                         "grid = (triton.cdiv(M * N, BLOCK_M * BLOCK_N) + 1,)")
    assert padded != src
    with pytest.raises(NotApplicable, match="not one product of two tile counts"):
        apply_recipe(RECIPE, RecipeContext(source=padded, launches=[]))
