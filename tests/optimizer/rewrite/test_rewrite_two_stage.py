"""two_stage_reduction: same-address atomics -> per-program partials + a deterministic second pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

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
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_xchg(out_ptr, tl.max(x, axis=0))", "merge differently"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr + offs, x)", "no atomic hits the same address"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr, x)", "is a block, not a scalar"),
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "if n > 0:\n        tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "not a top-level"),
    # the value through *args: the rewrite read None (AttributeError)
    ("tl.atomic_add(out_ptr, tl.sum(x, axis=0))", "tl.atomic_add(out_ptr, *[tl.sum(x, axis=0)])",
     "passes its value through"),
    # a launch in a one-line suite has no statement line: the partials buffer and the second pass were dropped
    ("        sum_kernel[", "        if n: sum_kernel[", "not a statement line of its own"),
])
def test_refusals(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "atomic_sum.py").read_text().replace(old, new)
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src))


@pytest.mark.parametrize("kernel", ["atomic_sum", "atomic_mse"])
def test_many_small_programs_become_a_persistent_loop_then_the_plain_form(kernel: str, tmp_path: Path) -> None:
    from optimizer.rewrite.recipe import apply_recipe_variants

    out = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text()))
    assert [r.applied.get("programs") for r in out] == [2048, 512, None]
    loop = out[0].source
    assert "for blk_ts in range(tl.program_id(0), n_blocks_ts, tl.num_programs(0)):" in loop
    assert "tl.store(partials_tsr + tl.program_id(0), acc_ts)" in loop and "tl.atomic_add" not in loop.split("class ModelNew")[0]
    assert "min(triton.cdiv(n, " in loop and "n_blocks_ts=triton.cdiv(n, " in loop
    assert "each looping over the original programs' blocks" in out[0].description
    for i in (0, 2):  # the persistent and the plain form both equal the atomic original
        same_outputs(kernel, out[i].source, tmp_path, atol=1e-4, rtol=1e-4)


def test_a_two_dimensional_grid_keeps_one_partial_per_program() -> None:
    from optimizer.rewrite.recipe import apply_recipe_variants

    out = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / "atomic_matrix.py").read_text()))
    assert [r.applied.get("programs") for r in out] == [None]


_COMPILE = r'''
import importlib.util, json, sys
import torch
from optimizer.harness.compile_only import CompileRecorder
spec = importlib.util.spec_from_file_location("cand", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
rec = CompileRecorder().install()
rec.current = []
mod.ModelNew()(*[torch.empty(shape, device="meta") for shape in json.loads(sys.argv[2])])
print(json.dumps([{"kernel": r.get("kernel"), "ok": r["ok"], "msg": r["message"]} for r in rec.current]))
'''


@pytest.mark.parametrize(("kernel", "shapes", "kernels"), [
    ("atomic_mse", [[1 << 22], [1 << 22]], {"mse_kernel", "mse_kernel_finish"}),
    ("atomic_bias_grad", [[65536, 512]], {"bias_grad_kernel", "bias_grad_kernel_finish"}),
])
def test_the_persistent_forms_compile_for_sm90(kernel: str, shapes: list, kernels: set, tmp_path: Path) -> None:
    """The loop-carried fp32 scalar or register row and the loop over the original program ids lower for cuda:90
    (compile only; the host's output tensor is moved to the inputs' device first)."""
    import json
    import os
    import re
    import subprocess
    import sys

    path = tmp_path / f"{kernel}_persistent.py"
    src = rewrite(kernel, RECIPE).source
    path.write_text(re.sub(r"dtype=torch.float32\)\n", lambda m: "dtype=torch.float32, device='meta')\n", src, count=1))
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    res = subprocess.run([sys.executable, "-c", _COMPILE, str(path), json.dumps(shapes)], capture_output=True, text=True,
                         env=env, timeout=600, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert {r["kernel"] for r in got} == kernels and all(r["ok"] for r in got), got


@pytest.mark.parametrize("kernel", ["atomic_colsum", "atomic_bias_grad", "atomic_class_totals"])
def test_vector_atomics_become_persistent_partial_rows_and_a_second_pass(kernel: str, tmp_path: Path) -> None:
    """Every program adding a vector into the same addresses (column sums, a bias gradient onto a pre-set output,
    unmasked class totals) -> min(G, P) programs accumulating an fp32 row, partial rows, a fixed-order second pass."""
    from optimizer.rewrite.recipe import apply_recipe_variants

    out = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text()))
    assert [r.applied for r in out] == [{"form": "vector", "programs": 256}, {"form": "vector", "programs": 64}]
    kernels = out[0].source.split("class ModelNew")[0]
    assert "tl.atomic_add" not in kernels and "for blk_ts in range(tl.program_id(0), n_blocks_ts, tl.num_programs(0)):" in kernels
    assert "tl.store(partials_tsr + tl.program_id(0) * n_out_ts + " in kernels
    assert "_finish[(triton.cdiv(" in out[0].source and "partial rows" in out[0].description
    for r in out:
        same_outputs(kernel, r.source, tmp_path, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("mask=in_row)\n", "mask=in_row)\n    done = r\n", "the atomic is not the last statement"),
    ("    in_row = cols < n_cols\n", "    in_row = cols < n_cols + r * 0\n", "depends on the program id"),
    ("colsum_kernel[(x.shape[0],)]", "colsum_kernel[(x.shape[0], 1)]", "not a 1-D tuple grid"),
])
def test_vector_form_refusals_name_the_reason(old: str, new: str, reason: str) -> None:
    src = (KERNELS / "atomic_colsum.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))


def test_new_parameters_go_before_a_defaulted_one(tmp_path: Path) -> None:
    """The partials' parameters are inserted before a defaulted one and passed by keyword; a launch passing the
    defaulted parameter by position is refused (the insertion would rebind it)."""
    res = rewrite("atomic_sum_scaled", RECIPE)
    head = res.source.split("def sum_kernel(")[1].split(")")[0]
    assert head.rstrip().endswith("SCALE: tl.constexpr = 1.0") and "partials_tsr" in head
    same_outputs("atomic_sum_scaled", res.source, tmp_path, atol=1e-4, rtol=1e-4)
    positional = (KERNELS / "atomic_sum_scaled.py").read_text().replace("(x, out, n, BLOCK=128)", "(x, out, n, 128, 1.0)")
    with pytest.raises(NotApplicable, match="defaulted parameter SCALE by position"):
        apply_recipe(RECIPE, RecipeContext(source=positional))
