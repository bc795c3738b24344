"""chunked_row_reduction: a spilling whole-row block becomes a loop over chunks (only with spill evidence)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "chunked_row_reduction", "params": {}}
SPILL = ["ir:register_spill"]


@pytest.mark.parametrize(("kernel", "accs"), [("wide_l2norm", 1), ("wide_max_minus_mean", 2), ("wide_row_mse", 1)])
def test_whole_row_block_becomes_a_chunk_loop(kernel: str, accs: int, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE, evidence=SPILL)
    body = res.source.split("class ModelNew")[0]
    assert "for chunk_start in range(0, " in body and "tl.arange(0, CHUNK)" in body
    assert "tl.arange(0, BLOCK)" not in body
    assert sum(f"acc_{i} = tl." in body for i in range(accs)) == accs and "CHUNK=1024" in res.source
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_variants_search_the_chunk() -> None:
    out = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / "wide_l2norm.py").read_text(), evidence=SPILL))
    assert [r.applied["CHUNK"] for r in out] == [1024, 2048, 4096, 512]


@pytest.mark.parametrize(("kernel", "evidence", "reason"), [
    ("wide_l2norm", [], "no register_spill evidence"),
    ("elem_scale", SPILL, "straight-line"),
    ("row_rms_advance", SPILL, "straight-line"),
])
def test_refusals(kernel: str, evidence: list[str], reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text(), evidence=evidence))


def test_a_stored_block_is_refused() -> None:
    src = (KERNELS / "wide_l2norm.py").read_text().replace(
        "    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))\n",
        "    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))\n"
        "    tl.store(x_ptr + row * stride + cols, x * 2, mask=cols < n_cols)\n")
    with pytest.raises(NotApplicable, match="uses the row block outside a reduction"):
        apply_recipe(RECIPE, RecipeContext(source=src, evidence=SPILL))


def test_a_reduction_of_an_unpacked_input_is_refused() -> None:
    """``tl.sum(*xs, ...)``: no input the accumulator could read (the plan used to take the rank of None)."""
    src = (KERNELS / "wide_l2norm.py").read_text().replace("tl.sum(x * x, axis=0)", "tl.sum(*[x * x], axis=0)")
    with pytest.raises(NotApplicable, match="passes its input through"):
        apply_recipe(RECIPE, RecipeContext(source=src, evidence=SPILL))


def test_card_recipe_falls_back_to_a_launch_search_that_keeps_warps() -> None:
    card = {"kind": "register_spill_relief", "params": {"values": [1024], "search": {"num_warps": [2, 4, 8, 16]}}}
    chunked = apply_recipe(card, RecipeContext(source=(KERNELS / "wide_l2norm.py").read_text(), evidence=SPILL))
    assert chunked.applied == {"CHUNK": 1024}
    src = (KERNELS / "dot_linear_relu.py").read_text()  # num_warps=2 at the launch, not a row block
    res = apply_recipe(card, RecipeContext(source=src, evidence=SPILL, bottleneck="occupancy_limited"))
    assert res.applied["num_warps"] >= 2 and "chunk loop not applicable" in res.description
    assert res.applied["via"] == "launch_params" and "via" not in chunked.applied  # a knob made it: not structural
    wide = apply_recipe(card, RecipeContext(source=src.replace("num_warps=2", "num_warps=8"), evidence=SPILL))
    assert wide.applied["num_warps"] == 16


def test_a_constexpr_if_and_a_programs_piece_of_the_row_are_chunked(tmp_path: Path) -> None:
    res = apply_recipe({"kind": "chunked_row_reduction", "params": {"values": [256]}},
                       RecipeContext(source=(KERNELS / "wide_scaled_sumsq.py").read_text(), evidence=SPILL))
    body = res.source.split("class ModelNew")[0]
    assert "for chunk_start in range(0, BLOCK, CHUNK):" in body  # the chunks walk this program's piece
    assert "cols = piece * BLOCK + chunk_start + tl.arange(0, CHUNK)" in body and "if HAS_SCALE:" in body
    same_outputs("wide_scaled_sumsq", res.source, tmp_path, atol=1e-3, rtol=1e-4)


def test_a_reduction_of_another_reductions_result_is_refused() -> None:
    """sum((x - max(x))**2) is a second pass over the row: no online rescaling splits it (only sums of exp)."""
    src = (KERNELS / "wide_l2norm.py").read_text().replace(
        "    tl.store(out_ptr + row, tl.sqrt(tl.sum(x * x, axis=0)))\n",
        "    m = tl.max(x, axis=0)\n    tl.store(out_ptr + row, tl.sum((x - m) * (x - m), axis=0))\n")
    with pytest.raises(NotApplicable, match="reads m, a result of the reductions"):
        apply_recipe(RECIPE, RecipeContext(source=src, evidence=SPILL))


@pytest.mark.parametrize(("kernel", "accs"), [("wide_piece_lse", 2), ("wide_row_lse2", 3), ("wide_masked_lse", 2)])
def test_a_log_sum_exp_block_is_chunked_with_online_rescaling(kernel: str, accs: int, tmp_path: Path) -> None:
    """max(x) then sum(E(x - max)) (E: tl.exp2 with a scale, or a jitted exp helper; the sum masked by tl.where): a
    running max per lane and a partial sum rescaled when it grows, merged at the row max after the loop."""
    res = apply_recipe({"kind": "chunked_row_reduction", "params": {"values": [256]}},
                       RecipeContext(source=(KERNELS / f"{kernel}.py").read_text(), evidence=SPILL))
    body = res.source.split("class ModelNew")[0]
    assert body.count("for chunk_start in range(") == 1 and "tl.arange(0, BLOCK)" not in body
    assert sum(f"acc_{i} = tl." in body for i in range(accs)) == accs and "acc_0_ref = tl.where(" in body
    assert "rescaled online" in res.description
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("    total = ", "    big = big + 1.0\n    total = ", "reads big, a result of the reductions"),
    ("fexp(v - big)", "fexp(v * 2.0 - big)", "reads big, a result of the reductions"),
    ("tl.log(tl.sum(fexp(v - big), 0))", "tl.log(tl.sum(fexp(v - tl.max(v, 0)), 0))", "inside its input"),
    ("tl.sum(fexp(v - big), 0)", "tl.sum(tl.where(mask, fexp(v - big), 1.0), 0)", "reads big, a result"),
])
def test_log_sum_exp_shapes_outside_the_domain_are_refused(old: str, new: str, reason: str) -> None:
    """A rebound max, a sum of exp over another value than the max's, a max nested in the sum: not the pair."""
    src = (KERNELS / "wide_piece_lse.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new), evidence=SPILL))


def test_a_programs_block_summed_into_an_atomic_is_chunked_within_its_piece(tmp_path: Path) -> None:
    """`offs = pid * BLOCK + tl.arange(0, BLOCK)` reduced to one scalar per program: the loop walks the piece and the
    one atomic per program stays (this form was refused as 'no top-level cols = tl.arange' before)."""
    res = apply_recipe({"kind": "chunked_row_reduction", "params": {"values": [256]}},
                       RecipeContext(source=(KERNELS / "atomic_sum.py").read_text(), evidence=SPILL))
    assert "offs = pid * BLOCK + chunk_start + tl.arange(0, CHUNK)" in res.source
    assert "CHUNK=min(256, 128)" in res.source
    same_outputs("atomic_sum", res.source, tmp_path, atol=1e-3, rtol=1e-4)
