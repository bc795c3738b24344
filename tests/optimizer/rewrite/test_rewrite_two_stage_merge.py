"""two_stage_reduction beyond one top-level atomic_add: max/min merges, if/else alternatives, META grids."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "two_stage_reduction", "params": {}}


def test_an_atomic_max_in_both_branches_under_a_meta_grid_becomes_partials_merged_by_max(tmp_path: Path) -> None:
    res = rewrite("atomic_amax_meta", RECIPE)
    kernels = res.source.split("class ModelNew")[0]
    assert "tl.atomic_max" not in kernels
    assert kernels.count("tl.store(partials_tsr + tl.program_id(0), block_amax)") == 2  # one per branch
    # sized for the smallest config block, every slot holding the output's value (a max's identity here)
    assert "partials_tsr = amax.reshape(-1)[0:0 + 1].repeat((triton.cdiv(n, 64)))" in res.source
    assert "acc = tl.maximum(acc, tl.where(offs < n_partials, part, acc))" in kernels
    assert "amax_kernel[grid](x, amax, n, partials_tsr=partials_tsr)" in res.source
    same_outputs("atomic_amax_meta", res.source, tmp_path)


def test_an_atomic_min_over_a_tuple_grid_merges_by_min(tmp_path: Path) -> None:
    res = rewrite("atomic_min_rows", RECIPE)
    kernels = res.source.split("class ModelNew")[0]
    assert "tl.store(partials_tsr + tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1)), " in kernels
    assert "tl.store(out_ptr + offset, tl.min(acc, axis=0))" in kernels
    assert "partials_tsr = out.reshape(-1)[0:0 + 1].repeat((m) * (triton.cdiv(n, 32)))" in res.source
    same_outputs("atomic_min_rows", res.source, tmp_path)


def test_a_sum_under_a_meta_grid_zeroes_the_slots_no_program_writes(tmp_path: Path) -> None:
    src = (KERNELS / "atomic_amax_meta.py").read_text().replace("atomic_max", "atomic_add").replace(
        "tl.max(tl.abs(x))", "tl.sum(x, axis=0)")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "partials_tsr = torch.zeros((triton.cdiv(n, 64)), device=amax.device, dtype=torch.float32)" in res.source


def test_independent_atomics_on_two_targets_get_a_partials_buffer_and_a_pass_each(tmp_path: Path) -> None:
    res = rewrite("atomic_sum_and_max", RECIPE)
    kernels = res.source.split("class ModelNew")[0]
    assert "tl.store(partials_tsr + tl.program_id(0), tl.sum(x, axis=0))" in kernels
    assert "tl.store(partials_tsr2 + tl.program_id(0), tl.max(" in kernels
    assert "def sum_max_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, partials_tsr, partials_tsr2):" in kernels
    assert "partials_tsr2 = out.reshape(-1)[1:1 + 1].repeat((triton.cdiv(n, 128)))" in res.source
    assert "sum_max_kernel_finish2[(1,)](partials_tsr2, out, partials_tsr2.numel(), 1, BLOCK=1024)" in res.source
    same_outputs("atomic_sum_and_max", res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_a_max_under_a_one_d_tuple_grid_takes_only_the_plain_form() -> None:
    from optimizer.rewrite.recipe import apply_recipe_variants

    src = (KERNELS / "atomic_amax_meta.py").read_text().replace("amax_kernel[grid](x, amax, n)",
                                                                 "amax_kernel[(triton.cdiv(n, 64),)](x, amax, n)")
    out = apply_recipe_variants(RECIPE, RecipeContext(source=src))
    assert [r.applied.get("programs") for r in out] == [None]  # a persistent loop would sum the maxima
    assert "repeat((triton.cdiv(n, 64)))" in out[0].source


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("        tl.atomic_max(amax_ptr, block_amax)\n", "        tl.atomic_max(amax_ptr + 1, block_amax)\n",
     "is not a top-level statement"),  # two targets, each in one branch: a program may skip either
    ("        tl.atomic_max(amax_ptr, block_amax)\n", "        tl.atomic_min(amax_ptr, block_amax)\n",
     "merge differently"),
    ("    else:\n        tl.atomic_max(amax_ptr, block_amax)\n", "    tl.atomic_max(amax_ptr, block_amax)\n",
     "not the two branches of one top-level if/else"),
    ('configs=[triton.Config({"BLOCK": 64}, num_warps=2)]', "configs=make_configs()", "smallest value"),
])
def test_refusals_name_what_is_missing(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "atomic_amax_meta.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))
