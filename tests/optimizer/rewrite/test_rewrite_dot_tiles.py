"""dot_tile_search: Hopper tile configs for tl.dot kernels (autotune + fixed variants), bounded by evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.recipes.appliers import (
    NotApplicable,
    RecipeContext,
    apply_recipe,
    apply_recipe_variants,
)

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
