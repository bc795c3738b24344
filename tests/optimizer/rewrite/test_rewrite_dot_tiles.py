"""dot_tile_search: Hopper tile configs for tl.dot kernels (autotune + fixed variants), bounded by evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "dot_tile_search", "params": {}}


def variants(kernel: str, **ctx: object) -> list:
    return apply_recipe_variants(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text(), **ctx))


@pytest.mark.parametrize(("kernel", "grid"), [
    ("dot_kloop", "lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))"),
    ("dot_bmm_names", "lambda META: (triton.cdiv(M, META['BM']), triton.cdiv(N, META['BN']), B)"),
    ("dot_linear_relu", "lambda META: (triton.cdiv(N, META['BLOCK_N']), triton.cdiv(M, META['BLOCK_M']))"),
    ("dot_inline_pid", "lambda META: (triton.cdiv(M, META['BLOCK_M']), triton.cdiv(N, META['BLOCK_N']))"),
])
def test_autotune_then_fixed_configs_that_still_match(kernel: str, grid: str, tmp_path: Path) -> None:
    out = variants(kernel)
    assert 3 <= len(out) <= 8 and out[0].applied["mode"] == "autotune"
    auto = out[0].source
    assert "@triton.autotune(" in auto and grid in auto and "num_warps=" not in auto.split("class ModelNew")[1]
    fixed = out[1]
    assert fixed.applied["mode"] == "fixed" and fixed.applied["BLOCK_M"] == 128 and fixed.applied["BLOCK_N"] == 256
    same_outputs(kernel, fixed.source, tmp_path, atol=1e-3, rtol=1e-3)


def test_axes_follow_the_program_ids_not_the_literal_values() -> None:
    fixed = variants("dot_linear_relu")[1].source  # BLOCK_N on axis 0 (16 -> 256), BLOCK_M on axis 1 (64 -> 128)
    assert "linear_relu_kernel[(triton.cdiv(N, 256), triton.cdiv(M, 128))]" in fixed
    assert "num_warps=8, num_stages=3" in fixed


def test_spill_evidence_never_lowers_warps_or_grows_the_tile() -> None:
    with pytest.raises(NotApplicable, match="register_spill evidence"):  # 32x32 w4: every Hopper config is bigger
        variants("dot_kloop", evidence=["ir:register_spill"])
    big = (KERNELS / "dot_kloop.py").read_text().replace("BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)", "BLOCK_M=256, BLOCK_N=256, BLOCK_K=64, num_warps=8)")
    big = big.replace("(triton.cdiv(M, 32), triton.cdiv(N, 32))", "(triton.cdiv(M, 256), triton.cdiv(N, 256))")
    everything = apply_recipe_variants(RECIPE, RecipeContext(source=big))
    kept = apply_recipe_variants(RECIPE, RecipeContext(source=big, evidence=["ir:register_spill"]))
    assert len(kept[0].applied["configs"]) < len(everything[0].applied["configs"])
    assert all(c["num_warps"] >= 8 and c["BLOCK_M"] * c["BLOCK_N"] <= 256 * 256 for c in kept[0].applied["configs"])


@pytest.mark.parametrize(("kernel", "reason"), [
    ("elem_scale", "no tl.dot"),
    ("dot_bmm", "not a literal at the launch"),
    ("dot_tile", "program axes do not map"),
])
def test_refusals(kernel: str, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / f"{kernel}.py").read_text()))


def test_a_module_level_launch_passing_a_tile_by_name_is_refused() -> None:
    """A launch outside any function has no launcher to find the name's binding in (it used to walk None)."""
    src = (KERNELS / "dot_tile.py").read_text().split("class ModelNew")[0] + (
        "BK = 32\na, b = torch.randn(20, 17), torch.randn(17, 30)\nc = torch.empty((20, 30), dtype=torch.float32)\n"
        "tile_mm_kernel[(1,)](a, b, c, 20, 30, 17, BM=32, BN=32, BK=BK)\n")
    with pytest.raises(NotApplicable, match="BK .BLOCK_K. is not a literal at the launch"):
        apply_recipe(RECIPE, RecipeContext(source=src))


@pytest.mark.parametrize("kernel", ["dot_kloop", "dot_linear_relu"])
def test_persistent_variant_loops_over_tiles_and_matches(kernel: str, tmp_path: Path) -> None:
    out = variants(kernel, num_sms=3)  # few programs: every program walks several tiles
    pers = next(r for r in out if r.applied["mode"] == "persistent")
    assert len(out) <= 8
    assert "for tile_id in range(tl.program_id(0), num_tiles_0 * num_tiles_1, tl.num_programs(0)):" in pers.source
    assert "(min(3, (triton.cdiv(" in pers.source
    same_outputs(kernel, pers.source, tmp_path, atol=1e-3, rtol=1e-3)


def test_no_persistent_variant_for_a_batched_grid() -> None:
    assert all(r.applied["mode"] != "persistent" for r in variants("dot_bmm_names"))


def test_the_persistent_card_owns_only_its_points(tmp_path: Path) -> None:
    """persistent-tile-loop is the tile search restricted to its persistent (and descriptor) points: a session
    that spent the tile search can still try them, and a batched grid is refused with the reason."""
    import yaml

    from kb.vocab import CAUSE_FAMILIES

    card = yaml.safe_load((Path(__file__).resolve().parents[3] / "kb" / "cards" / "patterns" / "persistent-tile-loop.yaml").read_text())
    recipe = card["rewrite"]["recipe"]
    assert recipe["kind"] == "dot_tile_search" and "persistent-tile-loop" in CAUSE_FAMILIES["small_dot_tiles"]
    src = (KERNELS / "dot_kloop.py").read_text()
    out = apply_recipe_variants(recipe, RecipeContext(source=src, num_sms=3, evidence=["code:tl.dot"]))
    assert out and {r.applied["mode"] for r in out} <= {"persistent", "descriptor"} and out[0].applied["mode"] == "persistent"
    same_outputs("dot_kloop", out[0].source, tmp_path, atol=1e-3, rtol=1e-3)
    bmm = (KERNELS / "dot_bmm_names.py").read_text()
    assert {r.applied["mode"] for r in apply_recipe_variants(recipe, RecipeContext(source=bmm))} == {"descriptor"}
    only = {**recipe, "params": {"modes": ["persistent"]}}
    with pytest.raises(NotApplicable, match="none of the persistent points applies .*2-D grid"):
        apply_recipe(only, RecipeContext(source=bmm))


def test_meta_lambda_grid_and_launcher_defaults(tmp_path: Path) -> None:
    """The Triton tutorial's grid form: `lambda META: (cdiv(M, META['BLOCK_M']) * cdiv(N, META['BLOCK_N']),)` on a
    1-D program id, tiles passed from the launcher's parameter defaults. The grid already follows the tiles, so
    it is left alone; a fixed point passes literals at the launch."""
    out = variants("dot_meta_grid_1d")
    auto, fixed = out[0], out[1]
    assert auto.applied["mode"] == "autotune" and fixed.applied["mode"] == "fixed"
    grid = 'grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)'
    assert grid in auto.source and grid in fixed.source
    assert "@triton.autotune(" in auto.source and "BLOCK_M=block_m" not in auto.source
    assert "BLOCK_M=128, BLOCK_N=256, BLOCK_K=64" in fixed.source
    assert "def mm(a, b, block_m: int = 32" in fixed.source  # the launcher's signature is kept
    same_outputs("dot_meta_grid_1d", fixed.source, tmp_path, atol=1e-3, rtol=1e-3)


def test_meta_grid_reading_the_host_tile_is_refused() -> None:
    src = (KERNELS / "dot_meta_grid_1d.py").read_text().replace('META["BLOCK_M"]', "block_m")
    with pytest.raises(NotApplicable, match="META grid reads the host value block_m"):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_autotuned_kernel_gets_its_config_list_edited() -> None:
    """An autotuned dot kernel is not refused: the list its decorator reads (here from a module function) gains the
    Hopper configs it lacks, with the list's other meta-parameters, and loses dominated configs (a duplicate, and
    a pipeline over sm_90's shared memory at fp16); grid and launch stay."""
    import ast

    src = (KERNELS / "dot_autotuned_list.py").read_text()
    rec = {"kernel": "grouped_mm_kernel", "signature": {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"}}
    out = apply_recipe_variants(RECIPE, RecipeContext(source=src, launches=[rec]))
    assert len(out) == 1 and out[0].applied["mode"] == "configs"
    new = out[0].source
    ast.parse(new)
    body = new.split("def tile_configs():")[1].split("@triton.autotune")[0]
    assert body.count('"BM": 64, "BN": 64') == 1  # the duplicate dropped
    assert '"BM": 256, "BN": 256, "BK": 128' not in body  # (256*128 + 128*256) * 2 B * 4 stages > 227 KiB
    assert "{'BM': 128, 'BN': 256, 'BK': 64, 'GROUP': 8}, num_warps=8, num_stages=3" in body
    assert new.split("class ModelNew")[1] == src.split("class ModelNew")[1]
    assert len(out[0].applied["drop"]) == 2


def test_tiles_set_by_a_heuristic_are_not_searched_in_the_config_list() -> None:
    src = (KERNELS / "dot_autotuned_list.py").read_text().replace(
        "@triton.jit\ndef grouped", '@triton.heuristics({"BK": lambda args: 32})\n@triton.jit\ndef grouped')
    with pytest.raises(NotApplicable, match="heuristics sets the tile"):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_host_variable_tiles_on_a_1d_grid_are_searched_at_their_binding(tmp_path: Path) -> None:
    """Tiles that are host variables the launcher computes its 1-D grid from (a split-K GPTQ launcher's form):
    fixed points edit the bindings and the grid follows; no autotune point (no grid over META to follow it)."""
    out = variants("dot_host_tiles_1d")
    assert out and {r.applied["mode"] for r in out} <= {"fixed", "descriptor"}
    fixed = out[0].source
    assert "block_m = 128" in fixed and "block_n = 256" in fixed and "num_warps = 8" in fixed
    assert "grid = (programs,)" in fixed
    same_outputs("dot_host_tiles_1d", fixed, tmp_path, atol=1e-3, rtol=1e-3)
    literal = (KERNELS / "dot_host_tiles_1d.py").read_text().replace("triton.cdiv(M, block_m)", "triton.cdiv(M, 32)")
    with pytest.raises(NotApplicable, match="not host variables the grid is computed from"):
        apply_recipe(RECIPE, RecipeContext(source=literal))


def test_tiles_of_unmasked_accesses_keep_their_value() -> None:
    """A kernel that loads a tile without a mask only works while that tile divides the problem: the search keeps
    the tiles the unmasked load's block spans (here ``a``: M and K) and varies the rest; a kernel whose unmasked
    accesses span every tile (GPTQ split-K's form) is refused."""
    src = (KERNELS / "dot_host_tiles_1d.py").read_text()
    src = src.replace("mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)", ")")
    out = apply_recipe_variants(RECIPE, RecipeContext(source=src))
    fixed = [r.applied for r in out if r.applied["mode"] == "fixed"]
    assert fixed and all(p["BLOCK_M"] == 32 and p["BLOCK_K"] == 32 and p["BLOCK_N"] != 32 for p in fixed)
    every = src.replace("mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)", ")")
    with pytest.raises(NotApplicable, match="unmasked accesses .* span every tile"):
        apply_recipe(RECIPE, RecipeContext(source=every))


def test_tiles_spread_from_a_config_dict_are_edited_in_the_dict(tmp_path: Path) -> None:
    """``kernel[grid](..., **config)`` with the config built by the caller, one dict per regime (vLLM's fused_moe
    form): fixed points edit the dict holding the recorded tile (the small-batch dict stays), the host padding that
    reads ``config['BLOCK_SIZE_M']`` follows it, the unmasked row-index load keeps the M tile, and the launch
    options travel in the same dict. No autotune point: the host reads the tile from the dict."""
    rec = {"kernel": "gather_mm_kernel", "constexprs": {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16}}
    out = variants("dot_config_dict", launches=[rec])
    assert out and {r.applied["mode"] for r in out} == {"fixed"}
    first = out[0]
    assert first.applied["BLOCK_M"] == 32 and (first.applied["BLOCK_N"], first.applied["BLOCK_K"]) != (32, 16)
    new = first.source
    assert "config = {'BLOCK_SIZE_M': 16, 'BLOCK_SIZE_N': 16, 'BLOCK_SIZE_K': 16}" in new
    assert (f"config = {{'BLOCK_SIZE_M': 32, 'BLOCK_SIZE_N': {first.applied['BLOCK_N']}, 'BLOCK_SIZE_K': "
            f"{first.applied['BLOCK_K']}, 'num_warps': {first.applied['num_warps']}") in new
    assert "**config)" in new
    same_outputs("dot_config_dict", new, tmp_path, atol=1e-3, rtol=1e-3,
                 cases=[{"m": 40, "n": 50, "k": 70}, {"m": 3, "n": 20, "k": 24}])
    with pytest.raises(NotApplicable, match="no dict literal in the module holds the recorded tile"):
        apply_recipe(RECIPE, RecipeContext(source=(KERNELS / "dot_config_dict.py").read_text(), launches=[
            {**rec, "constexprs": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16}}]))


def test_a_config_comprehension_is_extended_and_a_tile_it_never_varies_is_kept() -> None:
    """DeepSeek's fp8 GEMM builds its configs with a comprehension over literal lists and never varies BLOCK_K (it is
    the scale group): the list gains Hopper configs, each with that BLOCK_K, behind the comprehension."""
    import ast

    src = (KERNELS / "dot_autotuned_list.py").read_text()
    start, end = src.index("def tile_configs():"), src.index("@triton.autotune")
    comp = ("def tile_configs():\n    return [triton.Config({'BM': bm, 'BN': bn, 'BK': 32, 'GROUP': 8}, num_warps=4,"
            " num_stages=s)\n            for bm in [16, 32] for bn in (32, 64) for s in range(3, 5)]\n\n\n")
    src = src[:start] + comp + src[end:]
    rec = {"kernel": "grouped_mm_kernel", "signature": {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp16"}}
    out = apply_recipe_variants(RECIPE, RecipeContext(source=src, launches=[rec]))
    assert len(out) == 1 and out[0].applied["mode"] == "configs" and out[0].applied["fixed"] == {"BLOCK_K": 32}
    added = out[0].applied["add"]
    assert added and all(c["kwargs"]["BK"] == 32 and c["kwargs"]["GROUP"] == 8 for c in added)
    assert any(c["kwargs"]["BM"] == 128 and c["kwargs"]["BN"] == 256 for c in added)
    new = out[0].source
    ast.parse(new)
    assert "return [*[triton.Config({'BM': bm" in new and "for s in range(3, 5)]" in new
    bad = src.replace("for s in range(3, 5)]", "for s in STAGES]")
    with pytest.raises(NotApplicable, match="comprehension does not loop over literal values"):
        apply_recipe(RECIPE, RecipeContext(source=bad, launches=[rec]))
