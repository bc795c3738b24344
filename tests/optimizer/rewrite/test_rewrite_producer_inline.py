"""producer_inline: a flat element-wise producer of scratch is recomputed inside its consumer (interpreter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "producer_inline", "params": {}}


def test_masked_scratch_feeding_a_row_scan(tmp_path: Path) -> None:
    res = rewrite("inline_masked_scan", RECIPE)
    host = res.source.split("class ModelNew")[1]
    assert "apply_keep_kernel[" not in host  # the producer launch and its write+read of scratch are gone
    assert "row_scan_kernel[(M,)](scratch, y, N, BLOCK=32, k_ptr_pi=keep, x_ptr_pi=x)" in host
    assert "tl.load(k_ptr_pi + (row * n_cols + cols), mask=mask, other=0)" in res.source
    same_outputs("inline_masked_scan", res.source, tmp_path)


def test_scalar_argument_and_the_stores_cast_are_kept(tmp_path: Path) -> None:
    res = rewrite("inline_axpy_rowsum", RECIPE)
    kernel = res.source.split("def row_sum_kernel")[1].split("class ModelNew")[0]
    assert "alpha_pi" in kernel and ".to(h_ptr.dtype.element_ty)" in kernel  # rounded to bf16 as the store did
    assert "alpha_pi=0.5" in res.source
    same_outputs("inline_axpy_rowsum", res.source, tmp_path, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize(("kernel", "old", "new", "reason"), [
    ("inline_masked_scan", "        return y", "        return y, scratch", "beyond its allocation"),
    ("inline_masked_scan", "        carry += tl.sum(x, axis=0)", "        carry += tl.sum(x, axis=0)\n"
     "        tl.store(x_ptr + row * n_cols + cols, x, mask=mask)", "other than as"),
    ("inline_axpy_rowsum", "    h = alpha * x + y\n", "    h = alpha * x + y + tl.sum(x, axis=0)\n",
     "not straight-line"),
    ("inline_axpy_rowsum", "tl.store(h_ptr + offs, h.to(h_ptr.dtype.element_ty), mask=m)",
     "tl.store(h_ptr + offs, tl.where(m, h, 0.0).to(h_ptr.dtype.element_ty), mask=m)", "own mask or program id"),
])
def test_refusals_name_the_reason(kernel: str, old: str, new: str, reason: str) -> None:
    src = (KERNELS / f"{kernel}.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))
