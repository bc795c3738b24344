"""Offline recipes: real source rewrites with diffs, evidence-guided search, and honest refusals."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.launch_params import next_point
from optimizer.rewrite.recipe import apply_recipe, can_apply

DATA = Path(__file__).parents[1] / "data"
SOFTMAX = (DATA / "softmax" / "initial.py").read_text()
SCALE = (DATA / "scale" / "initial.py").read_text()
LAUNCH = [{"kernel": "softmax_kernel", "grid": [8], "constexprs": {"BLOCK_N": 32}, "launches": 6,
           "divisible_by_16": ["x_ptr", "y_ptr", "n_cols", "stride"],
           "signature": {"n_rows": "i32", "n_cols": "i32", "stride": "i32"}}]


def run(kind: str, params: dict, source: str = SOFTMAX, **kw) -> object:
    ctx = RecipeContext(source=source, launches=kw.pop("launches", LAUNCH), **kw)
    res = apply_recipe({"kind": kind, "params": params}, ctx)
    ast.parse(res.source)
    assert res.diff.startswith("--- a/") and res.source != source
    return res


def test_rows_per_program_loop_form_restructures_the_kernel() -> None:
    loop = {"param": "ROWS_PER_PROGRAM", "values": [2, 4], "form": "loop"}
    with pytest.raises(NotApplicable, match="would launch 4 programs instead of 8 on 132 SMs"):
        run("rows_per_program", loop)  # 8 rows: fewer programs would leave even more SMs idle
    res = run("rows_per_program", loop, launches=[{**LAUNCH[0], "grid": [1024]}])
    src = res.source
    assert "for _rpp in tl.static_range(ROWS_PER_PROGRAM):" in src and "if row < n_rows:" in src
    assert "ROWS_PER_PROGRAM: tl.constexpr" in src and "triton.cdiv(n_rows, ROWS_PER_PROGRAM)" in src
    assert res.applied == {"ROWS_PER_PROGRAM": 2}  # 1024 rows: only 2 leaves two programs per SM (512)
    # applied again on the result, the count becomes a launch parameter searched like any literal
    again = apply_recipe({"kind": "rows_per_program", "params": loop}, RecipeContext(source=src, launches=LAUNCH))
    assert again.applied == {"ROWS_PER_PROGRAM": 4} and "ROWS_PER_PROGRAM = 4" in again.source


def test_rows_per_program_uses_the_shape_to_pick_the_count() -> None:
    big = [{**LAUNCH[0], "grid": [65536]}]
    params = {"param": "ROWS_PER_PROGRAM", "values": [2, 8, 32, 128], "form": "loop"}
    res = run("rows_per_program", params, launches=big)
    assert res.applied == {"ROWS_PER_PROGRAM": 128}  # 65536/128 = 512 programs >= 2 x 132 SMs


def test_launch_params_direction_follows_the_bottleneck() -> None:
    space = {"num_warps": [1, 2, 4, 8, 16]}
    assert run("launch_params", {"search": space}, bottleneck="memory_bound").applied == {"num_warps": 8}
    assert run("launch_params", {"search": space}, bottleneck="occupancy_limited").applied == {"num_warps": 2}
    tried = [{"num_warps": 8}, {"num_warps": 2}]
    assert run("launch_params", {"search": space}, bottleneck="memory_bound", tried=tried).applied == {"num_warps": 16}
    with pytest.raises(NotApplicable, match="already tried"):
        next_point({"num_warps": [4, 8]}, {"num_warps": 4}, [{"num_warps": 8}], "memory_bound")


def test_launch_params_refuses_shape_derived_block_but_tunes_literals() -> None:
    with pytest.raises(NotApplicable, match="literal constexpr"):
        run("launch_params", {"search": {"BLOCK_SIZE": [64, 128]}})  # BLOCK_N = next_power_of_2(n_cols)
    res = run("launch_params", {"search": {"BLOCK_SIZE": [512, 2048]}}, source=SCALE,
              launches=[{"kernel": "scale_kernel", "grid": [3]}], bottleneck="memory_bound")
    assert "BLOCK_SIZE = 2048" in res.source and res.applied == {"BLOCK_SIZE": 2048}


def test_autotune_inserts_decorator_and_meta_grid() -> None:
    params = {"configs": [{"kwargs": {"BLOCK_SIZE": 512}, "num_warps": 4},
                          {"kwargs": {"BLOCK_SIZE": 2048}, "num_warps": 8}],
              "key": ["n_elements"]}
    res = run("autotune", params, source=SCALE, launches=[{"kernel": "scale_kernel", "grid": [3]}])
    src = res.source
    assert "@triton.autotune(" in src and "triton.Config({'BLOCK_SIZE': 2048}, num_warps=8)" in src
    assert "key=['n_elements']" in src
    assert "grid = lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)" in src
    assert "BLOCK_SIZE=BLOCK_SIZE" not in src and "num_warps=4)" not in src.split("class ModelNew")[1]
    # the softmax block is shape-derived: only warp counts can be tuned
    res2 = run("autotune", params)
    assert "triton.Config({}, num_warps=4)" in res2.source and "BLOCK_SIZE" in res2.description
    ok, why = can_apply({"kind": "autotune", "params": params}, RecipeContext(source=res2.source))
    assert not ok and "no launched kernel" in why


def test_compiler_hints_only_where_they_hold() -> None:
    hints = {"hints": ["multiple_of", "max_contiguous"], "targets": ["offsets"], "value": 16}
    res = run("compiler_hints", hints, source=SCALE,
              launches=[{"kernel": "scale_kernel", "constexprs": {"BLOCK_SIZE": 1024}}])
    assert "offsets = tl.max_contiguous(tl.multiple_of(offsets, 16), 16)" in res.source
    with pytest.raises(NotApplicable):  # a one-lane block: a hint of 1 would state nothing
        run("compiler_hints", hints, source=SCALE, launches=[{"kernel": "scale_kernel", "constexprs": {"BLOCK_SIZE": 1}}])
    strided = run("compiler_hints", {"hints": ["multiple_of"], "targets": ["strides"], "value": 16})
    assert "stride = tl.multiple_of(stride, 16)" in strided.source
    odd = [{**LAUNCH[0], "divisible_by_16": ["x_ptr", "y_ptr"]}]  # a case with stride 20 was recorded
    with pytest.raises(NotApplicable):
        run("compiler_hints", {"hints": ["multiple_of"], "targets": ["strides"], "value": 16}, launches=odd)


def test_refusals_name_the_reason() -> None:
    assert not can_apply({"kind": "split_k", "params": {}}, RecipeContext(source=SOFTMAX))[0]
    ok, why = can_apply({"kind": "care_padding_false", "params": {}}, RecipeContext(source=SOFTMAX, backend="cuda"))
    assert not ok and "ascend" in why
    res = run("care_padding_false", {}, backend="ascend")
    assert "care_padding=False" in res.source
    ok, why = can_apply({"kind": "input_precision", "params": {"value": "ieee"}}, RecipeContext(source=SOFTMAX))
    assert not ok


def test_value_only_reduction_keeps_ties_and_validates(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    src = (DATA / "top2" / "initial.py").read_text()
    res = run("value_only_reduction", {}, source=src, launches=[])
    assert "tl.argmax" not in res.source
    assert "first_idx_count = tl.sum(first_idx_is_ext.to(tl.int32), axis=0)" in res.source
    assert "second = tl.where(first_idx_count > 1, first, second)" in res.source
    with pytest.raises(NotApplicable, match="consumed"):  # the index is stored: it is really needed
        stored = src.replace("first + second)", "first + second + first_idx)")
        run("value_only_reduction", {}, source=stored, launches=[])
    path = tmp_path / "value_only.py"
    path.write_text(res.source)
    settings = LadderSettings(validation_seeds=[0, 1])
    ev = evaluate(load_problem(DATA / "top2"), path, backend="interpreter", settings=settings)
    assert ev.passed, ev.reason  # the inputs hold an exact tie for a group maximum


def test_matmul_gets_a_tile_config_search_not_rows_per_program() -> None:
    """Tuple-assigned block sizes are literals the autotune recipe can take over; a tl.dot kernel is not a row
    kernel."""
    src = (Path(__file__).parents[3] / "benchmarks" / "suite" / "matmul" / "initial.py").read_text()
    cfgs = [{"kwargs": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, "num_warps": 8, "num_stages": 3},
            {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, "num_warps": 4, "num_stages": 4}]
    res = run("autotune", {"configs": cfgs, "key": ["M", "N", "K"]}, source=src, launches=[])
    assert "triton.Config({'BLOCK_M': 128, 'BLOCK_N': 256, 'BLOCK_K': 64}, num_warps=8, num_stages=3)" in res.source
    assert "grid = lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))" in res.source
    assert "BLOCK_M=BLOCK_M" not in res.source and "num_warps=4" not in res.source.split("class ModelNew")[1]
    with pytest.raises(NotApplicable, match="tiled tl.dot kernel"):
        run("rows_per_program", {"param": "ROWS_PER_PROGRAM", "values": [2, 4]}, source=src, launches=[])


def test_autotune_leaves_block_sizes_that_also_size_host_buffers() -> None:
    """kl_div on the H200: BLOCK_SIZE also sizes the partials buffer, so tuning it broke the result (0.5 off).
    The recipe now tunes only what the host does not reuse."""
    src = (Path(__file__).parents[3] / "benchmarks" / "suite" / "kl_div" / "initial.py").read_text()
    cfgs = [{"kwargs": {"BLOCK_SIZE": 1024}, "num_warps": 4}, {"kwargs": {"BLOCK_SIZE": 4096}, "num_warps": 8}]
    res = run("autotune", {"configs": cfgs, "key": ["n_elements"]}, source=src, launches=[])
    assert "triton.Config({}, num_warps=4)" in res.source and "triton.Config({}, num_warps=8)" in res.source
    assert "BLOCK_SIZE=BLOCK_SIZE" in res.source and "host also uses them" in res.description
    with pytest.raises(NotApplicable, match="size host-side work"):
        run("autotune", {"configs": [{"kwargs": {"BLOCK_SIZE": 1024}}, {"kwargs": {"BLOCK_SIZE": 4096}}]}, source=src,
            launches=[])


def test_block_k_never_stands_in_for_a_row_block() -> None:
    """The H200 campaign's max_dim: the shared-memory-budget search (num_stages, BLOCK_K) shrank the row block
    BLOCK_SIZE 1024 -> 128 and 64 (0.98x, 0.82x). BLOCK_K names a dot's depth; on a kernel without tl.dot only
    num_stages may be searched."""
    src = (Path(__file__).parents[3] / "benchmarks" / "suite" / "max_dim" / "initial.py").read_text()
    launches = [{"kernel": "max_kernel", "grid": [16384], "constexprs": {"BLOCK_SIZE": 1024}}]
    search = {"search": {"num_stages": [2, 3, 4], "BLOCK_K": [32, 64, 128]}}
    res = run("launch_params", search, source=src, launches=launches)
    assert set(res.applied) == {"num_stages"} and "BLOCK_SIZE = 1024" in res.source
    with pytest.raises(NotApplicable):
        run("launch_params", {"search": {"BLOCK_K": [32, 64, 128]}}, source=src, launches=launches)


def test_names_aliasing_one_block_are_searched_once() -> None:
    """BLOCK_M and BLOCK_N both alias an elementwise kernel's only BLOCK_SIZE: never an internal error ('overlapping
    source edits'); a space of dot-tile names only is outside the domain of a kernel without tl.dot."""
    search = {"BLOCK_M": [64, 128, 256], "BLOCK_N": [128, 256], "BLOCK_K": [128, 256]}
    with pytest.raises(NotApplicable, match="needs a tl.dot kernel"):
        run("launch_params", {"search": search}, source=SCALE, launches=[{"kernel": "scale_kernel", "grid": [3]}],
            bottleneck="memory_bound")
    res = run("launch_params", {"search": {**search, "num_warps": [8]}}, source=SCALE,
              launches=[{"kernel": "scale_kernel", "grid": [3]}], bottleneck="memory_bound")
    assert "BLOCK_SIZE" not in res.applied  # a tile name never changes a dot-less kernel's block


def test_a_grid_literal_two_blocks_share_is_not_guessed() -> None:
    """``BLOCK_M=64, BLOCK_N=64`` with a grid of ``cdiv(M, 64), cdiv(N, 64)``: the search used to change both grid
    literals with either block (``cdiv(N, 128)`` with ``BLOCK_N=64`` leaves half the tiles unwritten; two blocks
    changed at once raised 'overlapping source edits'). Neither is tuned then; distinct literals still are."""
    src = (Path(__file__).parents[3] / "benchmarks" / "rewrite" / "examples" / "matmul_small_tile.py").read_text()
    search = {"search": {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128], "num_warps": [8]}}
    res = run("launch_params", search, source=src, launches=[], bottleneck="memory_bound")
    assert res.applied == {"num_warps": 8} and "grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))" in res.source
    distinct = src.replace("triton.cdiv(M, 64)", "triton.cdiv(M, 128)").replace("BLOCK_M=64", "BLOCK_M=128")
    res = run("launch_params", {"search": {"BLOCK_N": [64, 128]}}, source=distinct, launches=[],
              bottleneck="memory_bound")
    assert res.applied == {"BLOCK_N": 128} and "BLOCK_M=128, BLOCK_N=128" in res.source
    assert "grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))" in res.source
