"""block_scale where the grid reads the block from META: the block changes where it is decided (block_decided.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}}


def test_an_autotuned_block_gets_larger_configs_beside_a_shared_factory(tmp_path: Path) -> None:
    res = rewrite("meta_block_autotuned", RECIPE)
    assert res.applied == {"BLOCK_SIZE": [256, 512, 1024]}  # 2, 4, 8 x the factory's largest block (its default key)
    assert ("@triton.autotune(configs=[*elementwise_configs(), triton.Config({'BLOCK_SIZE': 256}, num_warps=4, "
            "num_stages=3),") in res.source
    assert 'key=["n"])' in res.source  # the autotune key stays
    assert "return [triton.Config({block_name: 128}, num_warps=4)]" in res.source  # the shared factory is left as it is
    assert "scale_add_kernel[grid](x, y, out, n)\n" in res.source  # nothing is set at the launch
    # the interpreter has no benchmarker: each added config alone (the autotuner then runs it without timing)
    added = re.findall(r"triton\.Config\(\{'BLOCK_SIZE': \d+\}[^)]*\)", res.source)
    assert len(added) == 3
    for cfg in added:
        one = re.sub(r"configs=\[\*elementwise_configs\(\), .*\], key", f"configs=[{cfg}], key", res.source)
        assert f"configs=[{cfg}], key" in one
        same_outputs("meta_block_autotuned", one, tmp_path)


def test_a_literal_config_list_is_appended_in_place() -> None:
    src = (KERNELS / "meta_block_autotuned.py").read_text().replace(
        "configs=elementwise_configs()", "configs=[triton.Config({'BLOCK_SIZE': 512}, num_warps=4)]")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert res.applied == {"BLOCK_SIZE": [1024, 2048, 4096]}
    assert ("configs=[triton.Config({'BLOCK_SIZE': 512}, num_warps=4), triton.Config({'BLOCK_SIZE': 1024}, "
            "num_warps=4, num_stages=3), triton.Config({'BLOCK_SIZE': 2048}, num_warps=8, num_stages=3)") in res.source


def test_a_recorded_grid_caps_the_added_configs() -> None:
    src = (KERNELS / "meta_block_autotuned.py").read_text()
    # 128-element blocks over 2640 programs: keeping >= 264 (2 per SM of 132) allows blocks up to 1280 elements
    rec = [{"kernel": "scale_add_kernel", "grid": [2640], "constexprs": {"BLOCK_SIZE": 128}}]
    assert apply_recipe(RECIPE, RecipeContext(source=src, launches=rec)).applied == {"BLOCK_SIZE": [256, 512, 1024]}
    few = [{"kernel": "scale_add_kernel", "grid": [264], "constexprs": {"BLOCK_SIZE": 128}}]
    with pytest.raises(NotApplicable, match="too few programs to divide"):
        apply_recipe(RECIPE, RecipeContext(source=src, launches=few))


def test_a_heuristic_block_is_edited_in_the_heuristic_behind_a_named_grid_and_star_args(tmp_path: Path) -> None:
    variants = apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / "meta_block_heuristic.py").read_text()))
    assert [v.applied["BLOCK"] for v in variants] == [1024, 2048, 4096, 512]
    src = variants[0].source
    assert '@triton.heuristics({"BLOCK": lambda args: max(32, 1024)})' in src
    assert "relu_rows_kernel[grid](x, out, cols, *x.stride()[:1], num_warps=4)" in src  # BLOCK never set here
    same_outputs("meta_block_heuristic", src, tmp_path)


@pytest.mark.parametrize(("kernel", "old", "new", "reason"), [
    ("meta_block_autotuned", 'META["BLOCK_SIZE"]', "1024", "does not divide by BLOCK_SIZE"),
    ("meta_block_autotuned", "configs=elementwise_configs()", "configs=[triton.Config({'BLOCK_SIZE': 4096})]",
     "already >= 4096 elements"),
    ("meta_block_autotuned", "configs=elementwise_configs()", "configs=make_configs(8)",
     "not spelled out in the source"),
    ("meta_block_heuristic", '"BLOCK": lambda args: 32', '"BLOCK": lambda a, b: 32', "neither a one-argument lambda"),
    ("meta_block_heuristic", "return rows, triton.cdiv", "return [rows] + triton.cdiv", "not a tuple expression"),
])
def test_refusals_name_what_is_missing(kernel: str, old: str, new: str, reason: str) -> None:
    src = (KERNELS / f"{kernel}.py").read_text()
    assert old in src
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=src.replace(old, new)))


def test_a_launch_set_block_behind_a_meta_grid_is_changed_at_the_launch() -> None:
    src = (KERNELS / "meta_block_heuristic.py").read_text().replace(
        '@triton.heuristics({"BLOCK": lambda args: 32})\n', "").replace(
        "*x.stride()[:1])", "x.stride(0), BLOCK=32)")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "relu_rows_kernel[grid](x, out, cols, x.stride(0), BLOCK=1024, num_warps=4)" in res.source
    assert 'meta["BLOCK"]' in res.source  # the grid already follows the launch's block


def test_a_launch_block_under_an_autotuner_of_warps_only_leaves_the_warps_to_it(tmp_path: Path) -> None:
    src = (KERNELS / "meta_block_heuristic.py").read_text().replace(
        '@triton.heuristics({"BLOCK": lambda args: 32})',
        '@triton.autotune(configs=[triton.Config({}, num_warps=2)], key=["n_cols"])').replace(
        "*x.stride()[:1])", "x.stride(0), BLOCK=32)")
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "relu_rows_kernel[grid](x, out, cols, x.stride(0), BLOCK=1024)" in res.source  # no num_warps it overrides
    assert "num_warps as its autotune configs set them" in res.description
