"""lane_accumulators: block reductions inside a column loop become per-lane accumulators reduced after the loop."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "lane_accumulators", "params": {}}


def test_max_sum_and_int_count_move_out_of_the_loops(tmp_path: Path) -> None:
    res = rewrite("loop_row_stats", RECIPE)
    body = res.source.split("class ModelNew")[0]
    assert 'm_lanes = tl.full([BLOCK], float("-inf"), dtype=tl.float32)' in body
    assert "s_lanes = tl.zeros([BLOCK], dtype=tl.float32)" in body and "count_lanes = tl.zeros([BLOCK], dtype=tl.int32)" in body
    assert "m_lanes = tl.maximum(m_lanes, x)" in body and "s_lanes += tl.exp(x - m)" in body
    # the combine runs once, after its loop, before anything reads the scalar
    assert body.index("m = tl.maximum(m, tl.max(m_lanes, axis=0))") < body.index("s_lanes += tl.exp(x - m)")
    assert "s += tl.sum(s_lanes, axis=0)" in body and "count += tl.sum(count_lanes, axis=0)" in body
    # `lo` starts from `m`, not a literal: its dtype is unknown, so its loop is left as it was
    assert "lo = tl.minimum(lo, tl.min(x, axis=0))" in body and "lo_lanes" not in body
    assert "3 per-chunk block reduction(s)" in res.description
    same_outputs("loop_row_stats", res.source, tmp_path, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kernel", ["chain_row_l2norm", "tiny_block_loop"])
def test_sum_loops_of_other_kernels_keep_their_outputs(kernel: str, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE)
    assert "_lanes = tl.zeros([" in res.source and "tl.sum(" in res.source
    same_outputs(kernel, res.source, tmp_path, atol=1e-5, rtol=1e-5)


def test_refusals_name_the_reason() -> None:
    with pytest.raises(NotApplicable, match="no tl.sum / tl.max / tl.min accumulates into a scalar inside a for loop"):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / "elem_scale.py").read_text()))
    with pytest.raises(NotApplicable, match="block ranges of 2 sizes"):
        src = (KERNELS / "loop_row_stats.py").read_text().replace(
            "    tl.store(out_ptr + row * 3, m)\n", "    tl.store(out_ptr + row * 3 + tl.arange(0, 1), m)\n")
        apply_recipe(RECIPE, RecipeContext(source=src))
    reader = (KERNELS / "chain_row_l2norm.py").read_text()
    assert "sq += tl.sum(x * x, axis=0)" in reader
    with pytest.raises(NotApplicable, match="also read or written elsewhere in its loop"):
        apply_recipe(RECIPE, RecipeContext(source=reader.replace("sq += tl.sum(x * x, axis=0)",
                                                                 "sq += tl.sum(x * x, axis=0)\n        sq = sq * 1.0")))


def test_accumulators_beyond_the_register_budget_are_refused() -> None:
    src = (KERNELS / "loop_row_stats.py").read_text()
    launches = [{"kernel": "row_stats_kernel", "constexprs": {"BLOCK": 8192}, "launches": 1}]
    with pytest.raises(NotApplicable, match="exceed 16384 per program"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=launches))


def test_a_start_from_an_int_parameter_is_typed_by_the_recorded_launch(tmp_path: Path) -> None:
    src = (KERNELS / "loop_row_stats.py").read_text().replace(
        "    tl.store(cnt_ptr + row, count)\n",
        "    first = n_cols\n"
        "    for start in range(0, n_cols, BLOCK):\n"
        "        cols = start + tl.arange(0, BLOCK)\n"
        "        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float(\"-inf\"))\n"
        "        first = tl.minimum(first, tl.min(tl.where((x == m) & (cols < n_cols), cols, n_cols), axis=0))\n"
        "    tl.store(cnt_ptr + row, count + first * 0)\n")
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "cnt_ptr": "*i32", "n_cols": "i32"}
    res = apply_recipe(RECIPE, RecipeContext(source=src, launches=[{"kernel": "row_stats_kernel", "signature": sig}]))
    assert "first_lanes = tl.full([BLOCK], 2147483647, dtype=tl.int32)" in res.source
    assert "first = tl.minimum(first, tl.min(first_lanes, axis=0))" in res.source
    with pytest.raises(NotApplicable, match="no launch recorded"):
        apply_recipe(RECIPE, RecipeContext(source=src.replace("s = s + tl.sum", "s = s * 1.0 + tl.sum").replace(
            "count += tl.sum", "count = count * 1 + tl.sum").replace("m = tl.maximum(m, tl.max(x, axis=0))",
                                                                     "m = tl.maximum(m * 1.0, tl.max(x, axis=0))")))


def test_an_accumulation_in_a_compile_time_branch_moves_out_of_the_loop(tmp_path: Path) -> None:
    res = rewrite("kl_rows_constexpr_if", RECIPE)
    assert "        else:\n            total_lanes += loss\n" in res.source
    assert "    total += tl.sum(total_lanes, axis=0)\n" in res.source.split("for i in range")[1]
    same_outputs("kl_rows_constexpr_if", res.source, tmp_path, atol=1e-5, rtol=1e-5)
    runtime = (KERNELS / "kl_rows_constexpr_if.py").read_text().replace("if mode == _MODE_NONE:", "if n_cols == 0:")
    with pytest.raises(NotApplicable, match="no tl.sum / tl.max / tl.min accumulates"):
        apply_recipe(RECIPE, RecipeContext(source=runtime))  # a run-time branch: not one of the loop's own


def test_a_block_widened_by_the_running_max_is_accumulated_per_lane(tmp_path: Path) -> None:
    """``s = tl.max(tl.maximum(E, s))`` (and the min form) is ``tl.maximum(s, tl.max(E))``: per-lane, reduced once."""
    res = rewrite("loop_max_filter", RECIPE)
    body = res.source.split("class ModelNew")[0]
    assert "top_lanes = tl.maximum(top_lanes, v)" in body and "low_lanes = tl.minimum(low_lanes, v)" in body
    assert "top = tl.maximum(top, tl.max(top_lanes, axis=0))" in body and "tl.max(tl.maximum(v, top))" not in body
    same_outputs("loop_max_filter", res.source, tmp_path, atol=0, rtol=0)


def test_a_sum_widened_by_the_running_value_is_not_a_lane_accumulation() -> None:
    """``s = tl.sum(x + s)`` adds s once per lane: not the running sum, so it is left alone (refused)."""
    src = (KERNELS / "loop_max_filter.py").read_text().replace("top = tl.max(tl.maximum(v, top))",
                                                               "top = tl.sum(v + top)")
    src = src.replace("low = tl.min(tl.minimum(low, v), axis=0)", "low = tl.min(v + low, axis=0)")
    with pytest.raises(NotApplicable, match="not `s \\+= tl.sum"):
        apply_recipe(RECIPE, RecipeContext(source=src))
