"""row_resident: several loops over one row -> a copy that loads the row once, launched when the row fits."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "row_resident", "params": {"values": [8192, 16384, 4096]}}


def test_three_passes_share_one_load_and_the_host_dispatches_on_the_row_length(tmp_path: Path) -> None:
    res = rewrite("loop_row_stats", RECIPE)
    body = res.source.split("class ModelNew")[0]
    rows = body[body.index("def row_stats_kernel_rows("):]
    assert rows.count("tl.load(") == 1 and "row_vals0 = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)" in rows
    assert 'tl.where(cols < n_cols, row_vals0, float("-inf"))' in rows and 'tl.where(cols < n_cols, row_vals0, float("inf"))' in rows
    assert "for start in" not in rows and rows.count("start = 0") == 3
    assert body.count("for start in range(0, n_cols, BLOCK):") == 3  # the original kernel keeps its loops
    host = res.source.split("class ModelNew")[1]
    assert "if n_cols <= 8192:" in host and "row_stats_kernel_rows[(n_rows,)](x, out, cnt, n_cols, BLOCK=triton.next_power_of_2(n_cols)" in host
    assert "row_stats_kernel[(n_rows,)](x, out, cnt, n_cols, BLOCK=16)" in host
    same_outputs("loop_row_stats", res.source, tmp_path)


def test_both_branches_keep_the_outputs(tmp_path: Path) -> None:
    ctx = RecipeContext(source=(KERNELS / "loop_row_stats.py").read_text())
    small = apply_recipe({"kind": "row_resident", "params": {"values": [32]}}, ctx)
    assert "if n_cols <= 32:" in small.source
    same_outputs("loop_row_stats", small.source, tmp_path)  # 70 columns run the original, 16 the resident copy
    assert [v.applied["LIMIT"] for v in apply_recipe_variants(RECIPE, ctx)] == [8192, 16384, 4096]


@pytest.mark.parametrize("kernel", ["twopass_layernorm", "row_rms_advance"])
def test_other_row_kernels_keep_their_outputs(kernel: str, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE)
    assert "_rows[" in res.source and "row_vals0 = tl.load(" in res.source
    same_outputs(kernel, res.source, tmp_path, atol=1e-5, rtol=1e-5)


def test_refusals() -> None:
    src = (KERNELS / "row_rms_advance.py").read_text()
    with pytest.raises(NotApplicable, match="nothing is loaded twice"):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / "chain_row_l2norm.py").read_text()))
    in_place = src.replace("tl.store(y_ptr + cols, x * rstd", "tl.store(x_ptr + cols, x * rstd")
    with pytest.raises(NotApplicable, match="no load is repeated"):  # the row is written through the pointer it loads
        apply_recipe(RECIPE, RecipeContext(source=in_place))
    other_mask = src.replace("        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)\n        tl.store",
                             "        x = tl.load(x_ptr + cols, mask=cols < n_cols - 1, other=0.0)\n        tl.store")
    with pytest.raises(NotApplicable, match="no load is repeated"):
        apply_recipe(RECIPE, RecipeContext(source=other_mask))
    with pytest.raises(NotApplicable, match=r"loop step 2 \* BLOCK is not a constexpr parameter"):
        apply_recipe(RECIPE, RecipeContext(source=src.replace("for off in range(0, n_cols, BLOCK):\n        cols = off + tl.arange(0, BLOCK)\n        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)\n        tl.store",
                                                               "for off in range(0, n_cols, 2 * BLOCK):\n        cols = off + tl.arange(0, BLOCK)\n        x = tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0)\n        tl.store")))


def test_loops_with_their_own_step_and_address_form_share_one_load(tmp_path: Path) -> None:
    """After the regrid-then-fuse chain the two loops step by BLOCK and BLOCK_2 and address the row as
    `x_ptr + row * n_cols + cols` and `x_ptr + offs` (offs = row * n_cols + cols): the same chunk once each runs once."""
    fused = rewrite("chain_flat_rowscale", {"kind": "kernel_chain_fusion", "params": {}})
    res = apply_recipe(RECIPE, RecipeContext(source=fused.source))
    rows = res.source[res.source.index("_rows("):res.source.index("class ModelNew")]
    assert rows.count("tl.load(x_ptr") == 1 and "tl.where(mask, row_vals0, 0.0)" in rows
    assert "BLOCK=triton.next_power_of_2(N), BLOCK_2=triton.next_power_of_2(N)" in res.source
    same_outputs("chain_flat_rowscale", res.source, tmp_path)


def test_a_refusal_names_why_each_repeated_load_is_not_shared() -> None:
    """An in-place filter writes the row it re-reads: the refusal says so, not only that nothing matched."""
    src = (KERNELS / "loop_max_filter.py").read_text()
    with pytest.raises(NotApplicable, match="reads through x_ptr, which the kernel also writes"):
        apply_recipe({"kind": "row_resident", "params": {}}, RecipeContext(source=src), compile_check=False)
