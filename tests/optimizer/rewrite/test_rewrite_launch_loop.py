"""launch_loop_grid: one launch per host-loop iteration (or per iteration of a nest of two) -> one launch with the loops
as grid axes; aliases of slices inlined; refused where concurrent iterations would race."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

DIAG = Path(__file__).parents[3] / "benchmarks" / "diagnosis"
RECIPE = {"kind": "launch_loop_grid", "params": {}}


def _apply(item: str, source: str | None = None):
    return apply_recipe(RECIPE, RecipeContext(source=source or (DIAG / item / "initial.py").read_text(), launches=[]))


@pytest.mark.parametrize(("item", "grid", "axis"), [
    ("moe_expert_loop", "grid = (triton.cdiv(C, BLOCK_M), triton.cdiv(F, BLOCK_N), E,)", 2),  # 2-D tiles per expert
    ("layernorm_row_loop", "layernorm_row_kernel[(1, M,)]", 1),  # one program per row, rows by the loop
])
def test_the_loop_becomes_a_grid_axis_and_validates(item: str, grid: str, axis: int, tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    res = _apply(item)
    assert grid in res.source and f"tl.program_id({axis}).to(tl.int64)" in res.source
    assert "for e in range" not in res.source and "for i in range" not in res.source
    assert ".stride(0)" in res.source and res.applied == {"axis": axis}
    path = tmp_path / "fused.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(DIAG / item), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def test_a_docstring_stays_first_and_a_strided_batch_validates(tmp_path: Path) -> None:
    """A 3-D batch walked by the loop, with the kernel's docstring kept above the prologue."""
    res = apply_recipe(RECIPE, RecipeContext(source=(Path(__file__).parent / "kernels" / "scale_loop.py").read_text()))
    body = res.source.split("def scale_kernel")[1]
    assert body.index('"""Scale one row."""') < body.index("loop_it = tl.program_id(1)")
    same_outputs("scale_loop", res.source, tmp_path)


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("        for e in range(E):\n", "        for e in range(0, E):\n", "not `for v in range"),
    ("x[e], self.W[e], out[e], C, D, F,", "x[e], self.W[e], out[e], C + e * 0, D, F,", "other than as a whole slice"),
    ("        for e in range(E):\n", "        for e in range(E):\n            pass\n", "holds more than the launch"),
])
def test_refusals(old: str, new: str, reason: str) -> None:
    src = (DIAG / "moe_expert_loop" / "initial.py").read_text()
    changed = src.replace(old, new)
    assert changed != src
    with pytest.raises(NotApplicable, match=reason):
        _apply("moe_expert_loop", changed)
    with pytest.raises(NotApplicable, match="holds more than the launch: `normalize_kernel"):
        _apply("head_softmax_loop")  # two launches per (b, h): kernel_chain_fusion first (test below)


def test_a_perfect_nest_takes_axes_1_and_2_and_validates(tmp_path: Path) -> None:
    """`x[g][c]` and `y[g, c]` move by both program ids, `bias[c]` by the inner one only; the shared gain stays."""
    res = rewrite("loop_nest_bias", RECIPE)
    assert "bias_gain_kernel[(R, G, C,)](x, bias, gain, y, N," in res.source and "for g in" not in res.source
    assert "loop_g = tl.program_id(1).to(tl.int64)\n    loop_c = tl.program_id(2).to(tl.int64)" in res.source
    assert "x_ptr = x_ptr + loop_g * x_ptr_loop_stride_g + loop_c * x_ptr_loop_stride_c" in res.source
    assert "b_ptr = b_ptr + loop_c * b_ptr_loop_stride_c\n" in res.source and "w_ptr = " not in res.source
    assert "x_ptr_loop_stride_c=x.stride(1)" in res.source and "b_ptr_loop_stride_c=bias.stride(0)" in res.source
    assert res.applied == {"axis": 1, "loops": 2}
    same_outputs("loop_nest_bias", res.source, tmp_path)


def test_aliases_are_inlined_and_a_transposed_slice_moves_by_its_own_strides(tmp_path: Path) -> None:
    res = rewrite("loop_alias_heads", RECIPE)
    host = res.source.split("class ModelNew")[1]
    assert "src = " not in host and "dst, sc = " not in host and "(aliases src, dst, sc inlined)" in res.description
    assert "grid = (triton.cdiv(T, BLOCK), B, H,)" in res.source
    assert "head_scale_kernel[grid](q, out, scale, T, BLOCK=BLOCK," in res.source
    assert "dst_ptr_loop_stride_h=out.stride(0), dst_ptr_loop_stride_b=out.stride(1)" in res.source
    same_outputs("loop_alias_heads", res.source, tmp_path)


def test_an_order_free_atomic_into_a_shared_total_runs_concurrently(tmp_path: Path) -> None:
    res = rewrite("loop_total_atomic", RECIPE)
    assert "sq_total_kernel[(M, B,)](x, y, total, N," in res.source and "total_ptr = " not in res.source
    same_outputs("loop_total_atomic", res.source, tmp_path, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize(("kernel", "old", "new", "reason"), [
    ("loop_nest_bias", "    tl.store(y_ptr + r * n_cols + cols, (x + b) * w, mask=mask)\n",
     "    tl.store(y_ptr + r * n_cols + cols, (x + b) * w, mask=mask)\n    tl.store(w_ptr + cols, w, mask=mask)\n",
     r"stores to w_ptr \(gain\), which every iteration shares: running iterations concurrently would race"),
    ("loop_nest_bias", "gain, y[g, c], N", "gain, y[g], N", r"stores to y_ptr \(y\[g\]\), which moves with g only"),
    ("loop_nest_bias", "bias[c], gain, y[g, c]", "bias[c], y[0, 0, 0], y[g, c]",
     r"writes y\[g, c\] through y_ptr and w_ptr gets y\[0, 0, 0\], which may overlap another iteration's slice"),
    ("loop_nest_bias", "bias_gain_kernel[(R,)]", "bias_gain_kernel[(R, 1)]",
     r"has 2 axes and the loops over g, c need 2 more \(a grid has at most three\)"),
    ("loop_nest_bias", "for c in range(C):", "for c in range(C + g * 0):", "the range of the loop over c depends on g"),
    ("loop_nest_bias", "                bias_gain_kernel[(R,)]", "                for _ in range(1):\n"
     "                    bias_gain_kernel[(R,)]", "the loop over c is nested in another loop"),
    ("loop_nest_bias", "        for g in range(G):\n", "        for g in range(G):\n            y.zero_()\n",
     "the loop over g holds more than the loop over c"),
    ("loop_nest_bias", "    r = tl.program_id(0)\n", "    r = tl.program_id(0) + tl.program_id(2)\n",
     r"reads tl.program_id\(2\), an axis the loops would take"),
    ("loop_alias_heads", "src = q[b, h]\n", "src = q[b, h] * 2\n",
     r"holds more than the launch: `src = q\[b, h\] \* 2`"),
    ("loop_alias_heads", "sc, T, BLOCK=BLOCK)", "sc, sc.shape[0] * T, BLOCK=BLOCK)",
     "the alias sc is used other than as a whole argument of the launch"),
    ("loop_total_atomic", "    tl.atomic_add(total_ptr,", "    old = tl.atomic_add(total_ptr,",
     r"stores to total_ptr \(total\), which every iteration shares"),
    ("loop_total_atomic", "for i in range(B):", "for i in range(70000):", "over the CUDA limit of 65535"),
])
def test_loop_refusals_say_why(kernel: str, old: str, new: str, reason: str) -> None:
    src = (KERNELS / f"{kernel}.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new, 1)))


def test_a_scratch_buffer_the_host_returns_keeps_its_stores_and_the_loop_is_refused() -> None:
    """After the chain fuses, the row norms are still stored (the host returns them): every batch entry writes the
    same buffer, so running the entries concurrently would race."""
    src = (KERNELS / "loop_norm_chain.py").read_text().replace("        return y\n", "        return y, nrm\n")
    fused = apply_recipe({"kind": "kernel_chain_fusion", "params": {}}, RecipeContext(source=src))
    assert "stores kept (the host reads them): nrm" in fused.description
    with pytest.raises(NotApplicable, match=r"stores to nrm_ptr \(nrm\), which every iteration shares"):
        apply_recipe(RECIPE, RecipeContext(source=fused.source))


def test_head_softmax_chain_then_loop_validates_and_compiles_for_sm90(tmp_path: Path) -> None:
    """The diagnosis item end to end: kernel_chain_fusion forwards the row statistics (their scratch buffers go), then
    the B x H host nest becomes grid axes 1 and 2; checked against the torch reference in the interpreter and
    compiled for an H200 at the problem's sizes."""
    from optimizer.harness.compile_check import evaluate_compile_only
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    folder = DIAG / "head_softmax_loop"
    fused = apply_recipe({"kind": "kernel_chain_fusion", "params": {}},
                         RecipeContext(source=(folder / "initial.py").read_text(), launches=[]))
    assert "allocation dropped: row_max, row_sum" in fused.description
    res = apply_recipe(RECIPE, RecipeContext(source=fused.source, launches=[]))
    assert res.applied == {"axis": 1, "loops": 2} and "for b in" not in res.source and "s, p = " not in res.source
    assert "[(S, B, H,)](scores, S, probs," in res.source
    path = tmp_path / "fused.py"
    path.write_text(res.source)
    problem, settings = load_problem(folder), LadderSettings(validation_seeds=[0])
    ev = evaluate(problem, path, backend="interpreter", settings=settings)
    assert ev.passed, ev.reason
    static = evaluate_compile_only(problem, path, [], settings=settings, cases=problem.cases_for("gpu"), why="test")
    assert static.passed, static.reason
