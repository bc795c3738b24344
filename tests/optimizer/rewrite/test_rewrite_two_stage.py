"""two_stage_reduction: same-address atomics -> per-program partials + a deterministic second pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.recipes.appliers import NotApplicable, RecipeContext, apply_recipe

RECIPE = {"kind": "two_stage_reduction", "params": {}}


@pytest.mark.parametrize("kernel", ["atomic_sum", "atomic_mse", "atomic_matrix"])
def test_atomics_become_partials_and_a_second_pass(kernel: str, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE)
    kernels = res.source.split("class ModelNew")[0]
    assert "tl.atomic_add" not in kernels
    assert "tl.store(partials_tsr + tl.program_id(0)" in kernels
    assert "_finish[(1,)](partials_tsr, out, partials_tsr.numel()," in res.source
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_two_dimensional_grid_linearizes_the_program_index() -> None:
    res = rewrite("atomic_matrix", RECIPE)
    assert "partials_tsr + tl.program_id(0) + tl.num_programs(0) * (tl.program_id(1))" in res.source
    assert "torch.empty((triton.cdiv(M, 16)) * (triton.cdiv(N, 32))" in res.source
    assert "partials_tsr.numel(), 1, BLOCK=1024)" in res.source  # the atomic's offset out_ptr + 1 is kept


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr, tl.sum(x, axis=0), mask=n > 0)", "is masked"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_max(out_ptr, tl.max(x, axis=0))", "merges differently"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr + offs, x)", "no atomic hits the same address"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr, x)", "is a block, not a scalar"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "if n > 0:\n        tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "not a top-level"),
])
def test_refusals(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "atomic_sum.py").read_text().replace(old, new)
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src))
