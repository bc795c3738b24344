"""kernel_chain_fusion: consecutive launches over one grid passing per-program values through buffers -> one kernel
(each rewritten module compared with the original in the interpreter), its refusals, and the composition with the
one-kernel single_pass_fusion."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "kernel_chain_fusion", "params": {}}
SUITE = Path(__file__).resolve().parents[3] / "benchmarks" / "suite"


def _kernels(source: str) -> list[str]:
    return [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)
            and any("jit" in ast.unparse(d) for d in n.decorator_list)]


def _launches(source: str) -> list[str]:
    return [ast.unparse(n.func.value) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)]


def test_naive_softmax_three_kernels_become_one_and_the_row_buffers_go(tmp_path: Path) -> None:
    res = rewrite("chain_softmax", RECIPE)
    assert _kernels(res.source) == ["fused_row_max_row_sum_exp_normalize_kernel"]
    assert _launches(res.source) == ["fused_row_max_row_sum_exp_normalize_kernel"]
    kernel = res.source.split("class ModelNew")[0]
    assert "max_ptr" not in kernel and "sum_ptr" not in kernel and kernel.count("tl.program_id(0)") == 1
    assert "row_max = torch.empty" not in res.source and "row_sum = torch.empty" not in res.source
    assert res.applied == {"kernels": ["row_max_kernel", "row_sum_exp_kernel", "normalize_kernel"]}
    assert "allocation dropped: row_max, row_sum" in res.description
    same_outputs("chain_softmax", res.source, tmp_path)


def test_then_single_pass_fusion_fuses_the_max_and_sum_loops(tmp_path: Path) -> None:
    """The composition the ladder runs over two rounds: the chain first, then the online max/sum in the one kernel."""
    fused = rewrite("chain_softmax", RECIPE)
    assert fused.source.split("class ModelNew")[0].count("for start in") == 3
    res = apply_recipe({"kind": "single_pass_fusion", "params": {}}, RecipeContext(source=fused.source))
    assert res.applied["fusion"] == "online max/sum"
    kernel = res.source.split("class ModelNew")[0]
    assert kernel.count("for start in") == 2  # one online max/sum pass, one normalize pass
    assert "s = s * tl.exp(m - m_ref) + tl.sum(tl.exp(x - m_ref), axis=0)" in kernel
    same_outputs("chain_softmax", res.source, tmp_path, atol=1e-5, rtol=1e-4)


def test_two_kernel_row_norm_forwards_an_expression_and_renames_the_second_block(tmp_path: Path) -> None:
    res = rewrite("chain_row_l2norm", RECIPE)
    kernel = res.source.split("class ModelNew")[0]
    assert "norms_fwd = tl.sqrt(sq) + 1e-12" in kernel and "norm = norms_fwd" in kernel
    assert "BLOCK_2: tl.constexpr" in kernel and "BLOCK=64, BLOCK_2=128" in res.source
    assert "norm_ptr" not in kernel and "norms = torch.empty" not in res.source
    same_outputs("chain_row_l2norm", res.source, tmp_path)


def test_an_elementwise_chain_keeps_the_returned_intermediate_and_drops_the_scratch_store(tmp_path: Path) -> None:
    res = rewrite("chain_residual_act", RECIPE)
    kernel = res.source.split("class ModelNew")[0]
    assert kernel.count("tl.store(") == 2  # h (the host returns it) and out; the scratch a is never written
    assert "tl.store(h_ptr + offs, h_fwd, mask=mask)" in kernel
    assert "h = tl.where(mask, h_fwd.to(h_ptr.dtype.element_ty), 0.0)" in kernel  # masked lanes keep other=0.0
    assert "a = a_fwd.to(a_ptr.dtype.element_ty)" in kernel  # empty_like: cast to the buffer's element type
    assert "stores kept (the host reads them): h" in res.description
    same_outputs("chain_residual_act", res.source, tmp_path)


def test_scratch_allocated_outside_the_host_loop_goes(tmp_path: Path) -> None:
    """The chain runs once per batch entry inside a host loop; the norms' scratch is allocated once before the loop
    and the host never reads it: its store, its parameter and its allocation go (the float32 value is forwarded
    without a cast). Then launch_loop_grid takes the loop (its alias inlined), and both results validate."""
    res = rewrite("loop_norm_chain", RECIPE)
    kernel = res.source.split("class ModelNew")[0]
    assert "nrm_ptr" not in kernel and "nrm = torch.zeros" not in res.source and ".to(" not in kernel
    assert "inv = 1.0 / nrm_fwd" in kernel and "allocation dropped: nrm" in res.description
    assert "fused_sq_norm_scale_rows_kernel[(M,)](xe, N, y[e], BLOCK=32)" in res.source
    same_outputs("loop_norm_chain", res.source, tmp_path)
    grid = apply_recipe({"kind": "launch_loop_grid", "params": {}}, RecipeContext(source=res.source))
    assert "[(M, B,)](x, N, y, BLOCK=32, x_ptr_loop_stride=x.stride(0), y_ptr_loop_stride=y.stride(0))" in grid.source
    same_outputs("loop_norm_chain", grid.source, tmp_path)


@pytest.mark.parametrize("problem", ["residual_rmsnorm", "hinge_loss", "masked_cumsum", "matmul_bias_relu"])
def test_suite_chains_over_different_grids_are_refused(problem: str) -> None:
    with pytest.raises(NotApplicable, match="launch different grids"):
        apply_recipe(RECIPE, RecipeContext(source=(SUITE / problem / "naive.py").read_text()))


def test_a_flat_row_broadcast_consumer_is_regridded_and_fused() -> None:
    """l2_norm's naive version divides in a flat kernel (offs // n_cols): regridded to (M,), the chain fuses."""
    res = apply_recipe(RECIPE, RecipeContext(source=(SUITE / "l2_norm" / "naive.py").read_text()))
    assert "one program per row" in res.description and "fused_row_norm_divide_kernel[(M,)]" in res.source


@pytest.mark.parametrize(("kernel", "old", "new", "reason"), [
    ("chain_row_l2norm", "norm = tl.load(norm_ptr + pid)", "norm = tl.load(norm_ptr + pid // 2)",
     r"reads norms at `norm_ptr \+ pid // 2`, not where row_norm_kernel wrote it"),
    ("chain_row_l2norm", "row_divide_kernel[(M,)]", "row_divide_kernel[(M, 1)]", "launch different grids"),
    ("chain_softmax", "    s = 0.0\n", "    if row < 0:\n        return\n    s = 0.0\n", "returns early"),
    ("chain_softmax", "@triton.jit\ndef row_sum_exp_kernel",
     "@triton.autotune(configs=[], key=[])\n@triton.jit\ndef row_sum_exp_kernel",
     "autotuned"),
    ("chain_softmax", "        return y\n",
     "        row_sum_exp_kernel[(M,)](x, row_max, row_sum, N, BLOCK=128)\n        return y\n",
     "launched from 2 places"),
    ("chain_row_l2norm", "tl.store(norm_ptr + row, tl.sqrt(sq) + 1e-12)",
     "tl.store(norm_ptr + row, tl.sqrt(sq) + 1e-12, mask=row < n_cols)",
     "reads norms under a mask other than the one row_norm_kernel stored it with"),
])
def test_refusals_say_why(kernel: str, old: str, new: str, reason: str) -> None:
    src = (KERNELS / f"{kernel}.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new, 1)))


def test_a_finish_pass_over_every_partial_needs_a_grid_barrier() -> None:
    """Same grid, but the second kernel reads the partials of every program (a two-stage reduction's second pass)."""
    src = (KERNELS / "chain_row_l2norm.py").read_text().replace(
        "    norm = tl.load(norm_ptr + pid)\n",
        "    norm = 0.0\n    for i in range(0, tl.num_programs(0)):\n        norm += tl.load(norm_ptr + i)\n")
    with pytest.raises(NotApplicable, match="reads norms inside a loop or branch"):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_a_kernel_outside_the_domain_stays_and_its_neighbours_fuse(tmp_path: Path) -> None:
    """row_max_kernel returns early: the longest window without it (sum-of-exp + normalize) fuses, and row_max
    stays a buffer that the fused kernel reads."""
    src = (KERNELS / "chain_softmax.py").read_text().replace(
        "    m = float(\"-inf\")\n", "    if row < 0:\n        return\n    m = float(\"-inf\")\n", 1)
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert res.applied == {"kernels": ["row_sum_exp_kernel", "normalize_kernel"]}
    assert _launches(res.source) == ["row_max_kernel", "fused_row_sum_exp_normalize_kernel"]
    assert "row_sum = torch.empty" not in res.source and "row_max = torch.empty" in res.source


def test_a_shifted_elementwise_read_splits_the_chain(tmp_path: Path) -> None:
    """add_kernel writes h one element further than act_kernel reads it (another program's block at the edges):
    add_kernel stays, act + scale fuse, and h keeps its buffer."""
    src = (KERNELS / "chain_residual_act.py").read_text().replace(
        "tl.store(h_ptr + offs, x + r, mask=mask)", "tl.store(h_ptr + offs + 1, x + r, mask=offs + 1 < n)")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert res.applied == {"kernels": ["act_kernel", "scale_kernel"]}
    assert _launches(res.source) == ["add_kernel", "fused_act_scale_kernel"]


@pytest.mark.parametrize(("item", "dropped"), [("softmax_three_kernels", "row_max, row_sum"),
                                               ("bias_gelu_residual", "t1, t2")])
def test_labelled_chains_fuse_and_validate(item: str, dropped: str, tmp_path: Path) -> None:
    """The diagnosis set's two multi-kernel chains (per-row scalars; fp32 element-wise temporaries, one allocated as
    `torch.empty_like` of the other), checked against their torch reference in the interpreter."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    folder = SUITE.parent / "diagnosis" / item
    res = apply_recipe(RECIPE, RecipeContext(source=(folder / "initial.py").read_text(), launches=[]))
    assert len(_launches(res.source)) == 1 and f"allocation dropped: {dropped}" in res.description
    path = tmp_path / "fused.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(folder), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason
