"""block_per_program: one program per element -> one program per BLOCK tile, validated in the interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import rewrite, same_outputs

from optimizer.rewrite.errors import NotApplicable

RECIPE = {"kind": "block_per_program", "params": {}}


def test_guarded_elementwise_kernel_becomes_a_masked_block(tmp_path: Path) -> None:
    res = rewrite("elem_scale", RECIPE)
    assert "pid = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)" in res.source
    assert "if pid >= n" not in res.source and "return\n" not in res.source.split("class ModelNew")[0]
    assert "scale_kernel[(triton.cdiv(n, 1024),)]" in res.source and "BLOCK_SIZE=1024" in res.source
    assert "# one element" in res.source  # comments survive the rewrite
    same_outputs("elem_scale", res.source, tmp_path)


def test_div_mod_index_becomes_a_row_by_column_tile(tmp_path: Path) -> None:
    launches = [{"kernel": "gather_rows_kernel", "grid": [70 * 4096], "ir_args": {"n_cols": 70}}]  # 4096 rows
    res = rewrite("elem_gather_2d", RECIPE, launches=launches)
    # first point: the column tile sized per call from the row width, with warps to match
    assert res.applied["form"] == "2d" and res.applied["BLOCK_SIZE"] == "fit"
    kernel = res.source.split("@triton.jit")[1].split("class ModelNew")[0]
    assert "//" not in kernel and "%" not in kernel  # no per-element division left
    assert "tl.program_id(1) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)" in kernel
    assert "block_bpp = min(1024, triton.next_power_of_2(n_cols))" in res.source
    assert "grid = (triton.cdiv(n_rows * n_cols, n_cols), triton.cdiv(n_cols, block_bpp))" in res.source
    assert "BLOCK_SIZE=block_bpp" in res.source and "num_warps=max(1, min(8, block_bpp // 128))" in res.source
    same_outputs("elem_gather_2d", res.source, tmp_path)


def test_two_d_points_start_from_the_per_call_fit_then_the_recorded_width() -> None:
    from rewrite_support import KERNELS

    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe_variants

    launches = [{"kernel": "gather_rows_kernel", "grid": [70 * 4096], "ir_args": {"n_cols": 70}}]  # 4096 rows
    ctx = RecipeContext(source=(KERNELS / "elem_gather_2d.py").read_text(), launches=launches)
    out = apply_recipe_variants(RECIPE, ctx)
    assert [r.applied["BLOCK_SIZE"] for r in out] == ["fit", 128, 256, 512]  # 128: next power of two of 70
    assert "triton.cdiv(n_cols, 128)" in out[1].source


def test_scalar_accumulator_in_a_k_loop_is_widened(tmp_path: Path) -> None:
    res = rewrite("elem_dot_loop", RECIPE)
    assert "acc = tl.full([BLOCK_SIZE], 0.0, tl.float32)" in res.source
    assert "if i < M" not in res.source  # the wrapping guard became the mask
    same_outputs("elem_dot_loop", res.source, tmp_path)


@pytest.mark.parametrize(("edit", "reason"), [
    ("    x = tl.load(x_ptr + pid)  # one element\n", "already has a block range"),
    ("    tl.atomic_add(y_ptr, 1.0)\n", "hits one address from every program"),
    ("    if x > 0:\n        x = -x\n", "depends on the program id"),
])
def test_refusals_name_the_failed_precondition(edit: str, reason: str) -> None:
    from rewrite_support import KERNELS

    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    src = (KERNELS / "elem_scale.py").read_text()
    anchor = "    x = tl.load(x_ptr + pid)  # one element\n"
    if reason == "already has a block range":
        bad = src.replace(anchor, "    offs = tl.arange(0, 16)\n" + anchor)
    else:
        bad = src.replace(anchor, anchor + edit)
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=bad))


def test_variants_cover_several_block_sizes() -> None:
    from rewrite_support import KERNELS

    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe_variants

    out = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / "elem_scale.py").read_text()))
    assert [r.applied["BLOCK_SIZE"] for r in out] == [1024, 256, 512, 2048]
    assert len({r.source for r in out}) == 4


def test_llm_prompt_carries_facts_failed_preconditions_and_target_structure() -> None:
    import yaml
    from rewrite_support import KERNELS

    from kb.models import parse_card
    from optimizer.proposers.llm import structural_section
    from optimizer.rewrite.context import RecipeContext

    root = Path(__file__).resolve().parents[3] / "kb" / "cards" / "patterns"
    names = ("block-per-program", "two-stage-reduction")
    cards = [parse_card(yaml.safe_load((root / f"{c}.yaml").read_text())) for c in names]
    src = (KERNELS / "elem_gather_2d.py").read_text()
    text = "\n".join(structural_section(src, cards, RecipeContext(source=src)))
    assert "block ranges: none (one element per program)" in text
    assert "div/mod on program-id values: pid // n_cols, pid % n_cols" in text
    assert "launch gather_rows_kernel[(n_rows * n_cols,)]" in text
    assert "Recipe `block_per_program` of `block-per-program`: applies" in text
    assert "Recipe `two_stage_reduction` of `two-stage-reduction`: does not apply: " in text
    assert "no atomic hits the same address" in text
    assert "### Target structure of `block-per-program`" in text and "col_bpp = tl.program_id(1)" in text
