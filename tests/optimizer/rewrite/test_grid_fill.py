"""The grid-fill guard: a point that launches fewer programs must not leave a recorded case below one program per SM,
nor shrink a grid already below it; the transforms that divide the program count refuse such points."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from rewrite_support import KERNELS

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.grid_fill import grid_programs, refusal, shrunk
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

SOFTMAX = (Path(__file__).parents[1] / "data" / "softmax" / "initial.py").read_text()
ROWS = {"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [2, 4, 8, 16]}}


def _by_rows(_t: Any, _ctx: Any, point: dict[str, Any], rec: Mapping[str, Any]) -> int | None:
    return shrunk(rec, point["R"])


def _rec(grid: Any, *cases: str, kernel: str = "k") -> dict[str, Any]:
    return {"kernel": kernel, "grid": grid, "cases": list(cases)}


def test_programs_of_a_recorded_grid() -> None:
    assert grid_programs(_rec([8, 4, 2])) == 64
    assert grid_programs(_rec("<function <lambda>>")) is None  # a grid the recorder could not evaluate
    assert shrunk(_rec([1000, 3]), 16) == 63 * 3  # cdiv along the first axis


def test_a_case_falling_below_one_program_per_sm_is_refused() -> None:
    ctx = RecipeContext(source="", launches=[_rec([4096], "big"), _rec([200], "small")])
    why = refusal(_by_rows, None, ctx, {"R": 2}, "k", 132)
    assert why is not None
    assert "case small" in why and "100 programs instead of 200 on 132 SMs" in why and "below one program" in why
    # 4096 / 16 = 256 programs: every case stays at or above the SMs
    assert refusal(_by_rows, None, RecipeContext(source="", launches=[_rec([4096])]), {"R": 16}, "k", 132) is None
    # the SM count is the target's: 200 / 2 = 100 programs still fill a 64-SM device
    assert refusal(_by_rows, None, ctx, {"R": 2}, "k", 64) is None


def test_an_underfilled_grid_may_not_shrink() -> None:
    ctx = RecipeContext(source="", launches=[_rec([8], "B=8")])
    why = refusal(_by_rows, None, ctx, {"R": 2}, "k", 132)
    assert why is not None and "case B=8" in why and "4 programs instead of 8" in why
    assert "already underfilled grid (124 of 132 SMs idle)" in why
    assert refusal(_by_rows, None, ctx, {"R": 1}, "k", 132) is None  # a point that keeps the grid


def test_a_kernel_no_case_launches_cannot_be_judged() -> None:
    other = RecipeContext(source="", launches=[_rec([8], kernel="forward")])
    why = refusal(_by_rows, None, other, {"R": 2}, "backward", 132)
    assert why is not None and "not launched at any recorded case" in why
    # no records at all: nothing to judge
    assert refusal(_by_rows, None, RecipeContext(source=""), {"R": 2}, "backward", 132) is None
    # a record without an integer grid is not judged
    assert refusal(_by_rows, None, RecipeContext(source="", launches=[_rec("grid")]), {"R": 2}, "k", 132) is None


def test_rows_per_program_keeps_only_factors_that_fill_every_case() -> None:
    launches = [_rec([4096], "big", kernel="softmax_kernel"), _rec([1024], "mid", kernel="softmax_kernel")]
    out = apply_recipe_variants(ROWS, RecipeContext(source=SOFTMAX, launches=launches))
    # 1024 rows: 4 per program leave 256 programs, 8 would leave 128 < 132
    assert sorted(r.applied["ROWS_PER_PROGRAM"] for r in out) == [2, 4]


def test_rows_per_program_refuses_a_grid_already_below_the_sms() -> None:
    ctx = RecipeContext(source=SOFTMAX, launches=[_rec([8], "B=8", kernel="softmax_kernel")])
    with pytest.raises(NotApplicable, match=r"at case B=8 softmax_kernel would launch 4 programs instead of 8 on 132"):
        apply_recipe(ROWS, ctx)


def test_heuristic_rows_refuses_a_kernel_no_case_launches() -> None:
    src = (KERNELS / "heur_rows_norm.py").read_text()
    forward_only = [{"kernel": "other_kernel", "grid": [8], "constexprs": {"BLOCK_ROWS": 1, "BLOCK_COLS": 64}}]
    with pytest.raises(NotApplicable, match="rms_rows_kernel is not launched at any recorded case"):
        apply_recipe({"kind": "rows_per_program", "params": {}}, RecipeContext(source=src, launches=forward_only))


def test_heuristic_rows_checks_every_case() -> None:
    src = (KERNELS / "heur_rows_norm.py").read_text()
    consts = {"BLOCK_ROWS": 1, "BLOCK_COLS": 64}
    big = {"kernel": "rms_rows_kernel", "grid": [65536], "constexprs": consts, "cases": ["rows=65536"]}
    ok = apply_recipe({"kind": "rows_per_program", "params": {}}, RecipeContext(source=src, launches=[big]))
    assert ok.applied == {"TILE": 2048}  # 32 rows a program: 2048 programs
    small = {**big, "grid": [2000], "cases": ["rows=2000"]}  # 2000 / 32 = 63 programs
    with pytest.raises(NotApplicable, match=r"case rows=2000 rms_rows_kernel would launch 63 programs instead of 2000"):
        apply_recipe({"kind": "rows_per_program", "params": {}}, RecipeContext(source=src, launches=[big, small]))


def test_block_scale_checks_every_case_not_only_the_first() -> None:
    src = (KERNELS / "tiny_block_flat.py").read_text()
    recipe = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}}
    big = {"kernel": "add_mul_kernel", "grid": [100000], "constexprs": {"BLOCK_SIZE": 128}}
    mid = {**big, "grid": [2000], "cases": ["n=256000"]}  # 2000 x 128 / 2048 = 125 < 132
    out = apply_recipe_variants(recipe, RecipeContext(source=src, launches=[big, mid]))
    assert sorted(r.applied["BLOCK_SIZE"] for r in out) == [512, 1024]
    small = {**big, "grid": [300], "cases": ["n=38400"]}
    with pytest.raises(NotApplicable, match=r"case n=38400 add_mul_kernel would launch \d+ programs instead of 300"):
        apply_recipe(recipe, RecipeContext(source=src, launches=[big, small]))


def test_persistent_partials_keep_the_sms_busy() -> None:
    src = (KERNELS / "atomic_colsum.py").read_text()
    recipe = {"kind": "two_stage_reduction", "params": {}}
    # 300 programs: 256 persistent ones still fill the SMs, 64 would leave 68 idle
    out = apply_recipe_variants(recipe, RecipeContext(source=src, launches=[_rec([300], kernel="colsum_kernel")]))
    assert [r.applied for r in out] == [{"form": "vector", "programs": 256}]
