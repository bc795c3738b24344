"""Row tiling: one-row-per-program kernels become [ROWS, BLOCK] tiles that still validate."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from rewrite_support import rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import parse_tree, targets
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.row_tile import tile_refusal
from optimizer.rewrite.rows_per_program import row_index

DATA = Path(__file__).parents[1] / "data"
RECIPE = {"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [2, 4, 8, 16, 32, 64]}}


def refusal(source: str, kernel: str) -> str:
    """Why the tile form refuses ``kernel`` of ``source`` (empty: it applies)."""
    ctx = RecipeContext(source=source)
    t = next(t for t in targets(parse_tree(ctx), ctx) if t.kernel.name == kernel)
    pid = row_index(t)
    assert pid is not None
    return tile_refusal(t.kernel, pid[1]) or ""


def tile(source: str, launches: list | None = None) -> object:
    res = apply_recipe(RECIPE, RecipeContext(source=source, launches=launches or []))
    ast.parse(res.source)
    return res


def test_softmax_becomes_a_two_dimensional_tile() -> None:
    src = (DATA / "softmax" / "initial.py").read_text()
    res = tile(src)
    out = res.source
    assert res.applied["form"] == "tile"
    assert "row = tl.program_id(0) * ROWS_PER_PROGRAM + tl.arange(0, ROWS_PER_PROGRAM)[:, None]" in out
    assert "row_tile_ok = row < n_rows" in out  # the kernel's own row count is the bound
    assert "cols = tl.arange(0, BLOCK_N)[None, :]" in out
    assert "tl.max(x, axis=1, keep_dims=True)" in out and "tl.sum(num, axis=1, keep_dims=True)" in out
    assert out.count("mask=(mask) & row_tile_ok") == 2  # the load and the store
    assert "softmax_kernel[(triton.cdiv(n_rows, ROWS_PER_PROGRAM),)]" in out
    assert "tl.static_range" not in out


def test_tile_size_follows_the_recorded_block() -> None:
    src = (DATA / "softmax" / "initial.py").read_text()
    wide = [{"kernel": "softmax_kernel", "grid": [65536], "constexprs": {"BLOCK_N": 1024}}]
    narrow = [{"kernel": "softmax_kernel", "grid": [65536], "constexprs": {"BLOCK_N": 32}}]
    assert tile(src, wide).applied["ROWS_PER_PROGRAM"] == 2  # 2 x 1024 elements per tile
    assert tile(src, narrow).applied["ROWS_PER_PROGRAM"] == 64


def test_row_addressed_scalar_loads_and_stores_get_the_row_mask() -> None:
    src = (DATA / "top2" / "initial.py").read_text()
    out = tile(src).source
    tree = ast.parse(out)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) in ("tl.load", "tl.store")]
    assert calls and all("row_tile_ok" in ast.unparse(c) for c in calls)
    assert "keep_dims=True" in out and "axis=0" not in out


@pytest.mark.parametrize(("edit", "reason"), [
    ("    for i in range(2):\n        pass\n", "for statement"),
    ("    z = tl.reshape(x, (BLOCK_N,))\n", "tl.reshape"),
    ("    z = tl.sum(x[:, None], axis=0)\n", "already indexes with None"),
])
def test_refusals_fall_back_to_the_loop_and_say_why(edit: str, reason: str) -> None:
    src = (DATA / "softmax" / "initial.py").read_text()
    anchor = "    num = tl.exp(x)\n"
    bad = src.replace(anchor, edit + anchor)
    res = apply_recipe(RECIPE, RecipeContext(source=bad, launches=[]))
    assert "form" not in res.applied and "tl.static_range" in res.source
    assert reason in res.description
    assert reason in refusal(bad, "softmax_kernel")


@pytest.mark.parametrize("problem", ["softmax", "top2"])
def test_tiled_candidates_validate_in_the_interpreter(problem: str, tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    res = tile((DATA / problem / "initial.py").read_text())
    path = tmp_path / "tiled.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(DATA / problem), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0, 1]))
    assert ev.passed, ev.reason


def test_value_only_reduction_composes_with_the_tile(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    tiled = tile((DATA / "top2" / "initial.py").read_text()).source
    res = apply_recipe({"kind": "value_only_reduction", "params": {}}, RecipeContext(source=tiled))
    assert "tl.expand_dims" not in res.source  # keep_dims results already broadcast
    assert "tl.sum(first_idx_is_ext.to(tl.int32), axis=1, keep_dims=True)" in res.source
    path = tmp_path / "tiled_value_only.py"
    path.write_text(res.source)
    ev = evaluate(load_problem(DATA / "top2"), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0, 1]))
    assert ev.passed, ev.reason


def test_autotuned_grid_is_refused_with_the_reason() -> None:
    """The H200 campaign's silu round 3: rows per program on an autotuned kernel passed ``META[...]`` from the host
    (NameError in every case). The row count lives only inside the grid lambda, so the recipe must refuse."""
    src = (DATA / "autotuned_silu" / "candidate.py").read_text()
    with pytest.raises(NotApplicable, match=r"depends on the autotuned META"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=[]))


def test_a_wide_row_block_is_refused_in_both_forms() -> None:
    """Rows per program is for short rows: a kernel whose program already owns an 8192-element block or wider is
    refused with the block named (tile and loop form alike), while a 4096-element block still gets the tile."""
    src = (DATA / "softmax" / "initial.py").read_text()
    wide = [{"kernel": "softmax_kernel", "grid": [4096], "constexprs": {"BLOCK_N": 16384}}]
    for form in ("tile", "loop"):
        recipe = {**RECIPE, "params": {**RECIPE["params"], "form": form}}
        with pytest.raises(NotApplicable, match=r"already gives each program a 16384-element block"):
            apply_recipe(recipe, RecipeContext(source=src, launches=wide))
    ok = [{"kernel": "softmax_kernel", "grid": [65536], "constexprs": {"BLOCK_N": 4096}}]
    assert tile(src, ok).applied["form"] == "tile"


def test_a_two_dimensional_grid_tiles_its_first_axis(tmp_path: Path) -> None:
    """One program per (token, head): axis 0 becomes a tile of tokens; tl.num_programs(0) (the token count the
    kernel derives its strides from) becomes the row count, axis 1 and the constexpr ``if`` stay as they are."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    src = (DATA / "head_blend" / "initial.py").read_text()
    res = tile(src)
    out = res.source
    assert res.applied["form"] == "tile"
    assert "n_tok = n_rows_rpp" in out and "n_head = tl.num_programs(1)" in out
    assert "head_blend_kernel[(triton.cdiv(T, ROWS_PER_PROGRAM), H)]" in out and "n_rows_rpp=T" in out
    assert "if WRITE_GATE:" in out and "tok, g, mask=row_tile_ok)" in out
    path = tmp_path / "tiled.py"
    path.write_text(out)
    ev = evaluate(load_problem(DATA / "head_blend"), path, backend="interpreter", settings=LadderSettings(validation_seeds=[0, 1]))
    assert ev.passed, ev.reason


def test_a_branch_on_a_runtime_value_is_not_tiled() -> None:
    src = (DATA / "head_blend" / "initial.py").read_text().replace("    if WRITE_GATE:\n", "    if tok < 3:\n")
    assert "has a if statement after the row index" in refusal(src, "head_blend_kernel")


DEFAULTED = '''import torch
import triton
import triton.language as tl


@triton.jit
def scale_rows(X, Y, n_cols, BLOCK: tl.constexpr, SQUARE: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * n_cols + cols, mask=cols < n_cols)
    if SQUARE:
        x = x * x
    tl.store(Y + row * n_cols + cols, x / tl.max(x, axis=0), mask=cols < n_cols)


def scale(x):
    y = torch.empty_like(x)
    scale_rows[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y
'''


def test_new_parameters_go_before_a_defaulted_one() -> None:
    """The old text applier appended the row constexpr after the last parameter's annotation, before its default:
    ``SQUARE: tl.constexpr, n_rows_rpp, ROWS_PER_PROGRAM: tl.constexpr = False`` took SQUARE's default away, so the
    launch that leaves SQUARE out failed. The parameters now go before the first defaulted one."""
    res = tile(DEFAULTED)
    assert res.applied["form"] == "tile"
    fn = next(n for n in ast.walk(ast.parse(res.source)) if isinstance(n, ast.FunctionDef) and n.name == "scale_rows")
    names = [a.arg for a in fn.args.args]
    assert names == ["X", "Y", "n_cols", "BLOCK", "n_rows_rpp", "ROWS_PER_PROGRAM", "SQUARE"]
    assert [ast.unparse(d) for d in fn.args.defaults] == ["False"]  # SQUARE keeps its default, nothing else has one
    pos = [a for a in DEFAULTED.splitlines() if "scale_rows[" in a][0]
    with pytest.raises(NotApplicable, match="passes defaulted parameter SQUARE by position"):
        tile(DEFAULTED.replace(pos, pos.replace("BLOCK=triton", "triton").replace("))", "), True)")))


@pytest.mark.parametrize("form", ["tile", "loop"])
def test_a_meta_grid_whose_block_the_launch_passes_is_grouped(form: str, tmp_path: Path) -> None:
    """DeepSeek-V3's act_quant: ``lambda meta: (cdiv(n, meta['BLOCK']),)`` launched with ``BLOCK=group``. The block is
    no autotuned value: the host computes the row count from the launch's argument (21 groups, 4 per program: the
    last program masks 3 rows off)."""
    recipe = {**RECIPE, "params": {**RECIPE["params"], "values": [4], "form": form}}
    res = rewrite("group_scale_meta_grid", recipe)
    assert "n_rows_rpp=triton.cdiv(x.numel(), (group))" in res.source
    assert "triton.cdiv(triton.cdiv(x.numel(), meta['BLOCK']), meta['ROWS_PER_PROGRAM'])" in res.source
    assert ("tl.static_range" in res.source) == (form == "loop")
    same_outputs("group_scale_meta_grid", res.source, tmp_path)


def test_a_meta_key_the_launch_does_not_pass_is_still_refused() -> None:
    src = (Path(__file__).parent / "kernels" / "group_scale_meta_grid.py").read_text()
    bad = src.replace("BLOCK=group)", "**{'BLOCK': group})")
    with pytest.raises(NotApplicable, match=r"depends on the autotuned meta"):
        apply_recipe(RECIPE, RecipeContext(source=bad, launches=[]))


def test_a_two_dimensional_tile_counts_as_a_wide_block() -> None:
    """A block-scaled dequant: one program per 128 x 128 tile. Each row slice is 128 elements, but the program
    already owns 16384 of them, so rows per program refuses it as it would a 16384-element row."""
    src = '''
import torch
import triton
import triton.language as tl


@triton.jit
def dequant_kernel(x_ptr, s_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    pid_m = tl.program_id(axis=0)
    pid_n = tl.program_id(axis=1)
    n = tl.cdiv(N, BLOCK)
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs = offs_m[:, None] * N + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.load(s_ptr + pid_m * n + pid_n), mask=mask)


def dequant(x, s, block=128):
    M, N = x.size()
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(M, meta['BLOCK']), triton.cdiv(N, meta['BLOCK']))
    dequant_kernel[grid](x, s, y, M, N, BLOCK=block)
    return y
'''
    launches = [{"kernel": "dequant_kernel", "grid": [56, 144], "constexprs": {"BLOCK": 128}}]
    with pytest.raises(NotApplicable, match=r"already gives each program a 16384-element block"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=launches))
    small = [{"kernel": "dequant_kernel", "grid": [56, 144], "constexprs": {"BLOCK": 32}}]  # 1024 elements: grouped
    assert "ROWS_PER_PROGRAM" in apply_recipe(RECIPE, RecipeContext(source=src, launches=small)).applied
