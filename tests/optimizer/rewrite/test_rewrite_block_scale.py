"""block_scale: a tiny constexpr block range becomes a larger one with the grid kept in step (interpreter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}}


def test_two_d_grid_literal_and_launch_change_together(tmp_path: Path) -> None:
    res = rewrite("tiny_block_2d", RECIPE)
    assert res.applied == {"BLOCK": 1024, "num_warps": 4}
    assert "silu_kernel[(M, triton.cdiv(N, 1024))](x, y, N, BLOCK=1024, num_warps=4)" in res.source
    same_outputs("tiny_block_2d", res.source, tmp_path)


def test_host_variable_and_ceil_division_grid(tmp_path: Path) -> None:
    res = rewrite("tiny_block_flat", RECIPE)
    assert "block = 1024" in res.source and "(n + block - 1) // block" in res.source  # the grid follows the name
    same_outputs("tiny_block_flat", res.source, tmp_path)


def test_row_loop_step_is_capped_by_the_recorded_row_length(tmp_path: Path) -> None:
    launches = [{"kernel": "row_mean_kernel", "grid": [4], "ir_args": {"n_cols": 3000}}]
    ctx = RecipeContext(source=(KERNELS / "tiny_block_loop.py").read_text(), launches=launches)
    variants = apply_recipe_variants(RECIPE, ctx)
    assert [v.applied["BLOCK"] for v in variants] == [1024, 2048, 4096, 512]  # 4096 = next power of two of 3000
    assert "row_mean_kernel[(M,)](x, out, N, BLOCK=2048, num_warps=8)" in variants[1].source
    for v in variants[:2]:
        same_outputs("tiny_block_loop", v.source, tmp_path)
    short = [{"kernel": "row_mean_kernel", "grid": [4], "ir_args": {"n_cols": 100}}]
    with pytest.raises(NotApplicable, match=r"loop bound \(100\) already fits"):
        apply_recipe(RECIPE, RecipeContext(source=ctx.source, launches=short))


@pytest.mark.parametrize(("kernel", "old", "new", "reason"), [
    ("tiny_block_2d", "BLOCK=64)", "BLOCK=1024)", "already >= 1024"),
    ("tiny_block_2d", "mask=mask, other=0.0)", "other=0.0)", "is not masked"),
    ("tiny_block_2d", "y = torch.empty_like(x)", "y = torch.empty_like(x)\n        pad = 64", "also appears in"),
    ("tiny_block_2d", "triton.cdiv(N, 64)", "N // 8", "does not divide by BLOCK"),
    ("tiny_block_flat", "block = 128", "block = x.shape[0] // 4", "not an integer literal"),
])
def test_refusals_name_the_failed_precondition(kernel: str, old: str, new: str, reason: str) -> None:
    src = (KERNELS / f"{kernel}.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))


def test_dot_kernels_are_outside_the_domain() -> None:
    src = (KERNELS / "dot_tile.py").read_text()
    with pytest.raises(NotApplicable, match="tl.dot"):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_a_grid_count_named_on_the_host_is_followed_to_its_assignment(tmp_path: Path) -> None:
    res = rewrite("tiny_block_partials", RECIPE)
    assert "n_partials = triton.cdiv(n, 1024)" in res.source  # the partial buffer and the finish kernel follow it
    assert "partial_sq_kernel[(n_partials,)](x, partials, n, BLOCK=1024, num_warps=4)" in res.source
    assert "finish_kernel[(1,)](partials, out, n_partials, BLOCK=256)" in res.source  # the other kernel's block stays
    same_outputs("tiny_block_partials", res.source, tmp_path, atol=1e-3, rtol=1e-4)


def test_a_grid_block_stops_where_the_recorded_grid_would_fall_below_two_programs_per_sm() -> None:
    src = (KERNELS / "tiny_block_2d.py").read_text()
    # 64-element blocks over a 128 x 16 grid: 2048 programs; keeping >= 264 (2 per SM of 132) allows blocks up to
    # 2048 x 64 / 264 = 496 elements, so none of the listed sizes fits and the largest power of two below, 256, is used
    variants = apply_recipe_variants(RECIPE, RecipeContext(source=src, launches=[{"kernel": "silu_kernel", "grid": [128, 16]}]))
    assert [v.applied["BLOCK"] for v in variants] == [256]
    roomy = apply_recipe_variants(RECIPE, RecipeContext(source=src, launches=[{"kernel": "silu_kernel", "grid": [4096, 64]}]))
    assert [v.applied["BLOCK"] for v in roomy] == [1024, 2048, 4096, 512]
    with pytest.raises(NotApplicable, match=r"too few programs to divide.*fewer than 264 programs"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=[{"kernel": "silu_kernel", "grid": [128, 4]}]))


def test_a_hard_coded_block_is_named_then_scaled(tmp_path: Path) -> None:
    """`pid * 128 + tl.arange(0, 128)` with a `cdiv(n, 128)` grid: the literal becomes a constexpr (the program is
    unchanged) and the block scales with its grid literal, in one rewrite."""
    res = rewrite("literal_block_flat", RECIPE)
    assert "offs = pid * BLOCK + tl.arange(0, BLOCK)" in res.source
    assert "gelu_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024, num_warps=4)" in res.source
    assert res.description.startswith("gelu_kernel: the literal block size 128 named as a constexpr BLOCK=128; ")
    same_outputs("literal_block_flat", res.source, tmp_path)


def test_a_hard_coded_loop_tile_scales_when_the_grid_cannot(tmp_path: Path) -> None:
    """Few programs (a [4, 2] grid: the column block must not grow) walking a 4-row loop tile: the tile is named
    TILE and grown so the [TILE, 64] tile holds ~2048 elements."""
    launches = [{"kernel": "colsum_kernel", "grid": [4, 2], "constexprs": {"BLOCK": 64}, "ir_args": {"D1": 16384}}]
    ctx = RecipeContext(source=(KERNELS / "literal_loop_tile.py").read_text(), launches=launches)
    out = apply_recipe_variants(RECIPE, ctx)
    assert [r.applied["TILE"] for r in out] == [32, 16, 64, 128]
    first = out[0].source
    assert "rows = tl.arange(0, TILE)" in first and "acc = tl.zeros((TILE, BLOCK), dtype=tl.float32)" in first
    assert "for r0 in range(0, D1, TILE):" in first and "BLOCK=64, TILE=32, num_warps=8)" in first
    same_outputs("literal_loop_tile", first, tmp_path)


def test_a_literal_that_also_means_something_else_stays() -> None:
    src = (KERNELS / "literal_block_flat.py").read_text().replace("0.5 * x *", "128 * x *")
    with pytest.raises(NotApplicable, match="the literal 128 is not only a block size"):
        apply_recipe(RECIPE, RecipeContext(source=src))


WIDE_ROWS = '''
import torch
import triton
import triton.language as tl


@triton.heuristics({"BLOCK_B": lambda args: 1, "BLOCK_F": lambda args: triton.next_power_of_2(args["n_feat"])})
@triton.jit
def row_scale_kernel(x, y, n_rows, n_feat, BLOCK_B: tl.constexpr, BLOCK_F: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    cols = tl.arange(0, BLOCK_F)
    mask = (rows < n_rows)[:, None] & (cols < n_feat)[None, :]
    offs = rows[:, None] * n_feat + cols[None, :]
    tl.store(y + offs, tl.load(x + offs, mask=mask, other=0.0) * 2.0, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        grid = lambda META: (triton.cdiv(x.shape[0], META["BLOCK_B"]),)  # noqa: E731
        row_scale_kernel[grid](x, y, x.shape[0], x.shape[1])
        return y
'''


def test_a_row_tile_already_over_the_tile_cap_is_refused_with_the_cap() -> None:
    """The other tile axis alone (32768 columns) exceeds the 16384-element cap: no larger row block fits, and the
    refusal says so (it used to crash on a zero cap: ``1 << -1``)."""
    launches = [{"kernel": "row_scale_kernel", "grid": [4096], "constexprs": {"BLOCK_B": 1, "BLOCK_F": 32768}}]
    with pytest.raises(NotApplicable, match="no BLOCK_B above 1 fits the caps"):
        apply_recipe(RECIPE, RecipeContext(source=WIDE_ROWS, launches=launches, evidence=["cause:tiny_programs"]))
