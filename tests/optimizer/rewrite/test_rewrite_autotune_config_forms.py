"""dot_tile_search on an autotuned kernel's config list, for configs as public kernels write them: num_warps /
num_stages left at Triton's defaults, a meta-parameter the host computes (``'NUM_SM': num_sms()``), no masks (the
tiles must keep dividing the problem); and L1's finding for a persistent dot loop on one warp group per SM."""

from __future__ import annotations

import pytest
from rewrite_support import KERNELS, rewrite

RECIPE = {"kind": "dot_tile_search", "params": {}}
KERNEL = "persistent_unmasked_matmul"


def test_configs_without_options_and_with_computed_values_are_edited() -> None:
    res = rewrite(KERNEL, RECIPE)
    src = res.source
    # the unmasked kernel gets Hopper warps / stages for tiles the list already holds, never a new tile
    assert "triton.Config({'BM': 128, 'BN': 128, 'BK': 64, 'PROGRAMS': sm_count()}, num_warps=8, num_stages=3)" in src
    assert "'BN': 256" not in src and "'BM': 256" not in src and "'BM': 64," not in src
    # configs that differ only in PROGRAMS are two configs, not duplicates
    assert "'PROGRAMS': 2" in src and src.count("'BM': 32, 'BN': 32, 'BK': 32") >= 2
    # (run in the interpreter through the harness by the dry round on tutorial_grouped_gemm: the autotuner needs it)


def test_a_masked_kernel_still_gets_new_tiles() -> None:
    src = (KERNELS / f"{KERNEL}.py").read_text().replace(
        "tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))",
        "tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rm[:, None] < M)").replace(
        "a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])",
        "a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=rm[:, None] < M, other=0.0)")
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    out = apply_recipe(RECIPE, RecipeContext(source=src), compile_check=False).source
    assert "'BN': 256" in out  # only B's load is unmasked: not every tile is pinned


@pytest.mark.parametrize(("programs", "warps", "fires"), [(4, 4, True), (4, 8, False), (200, 4, False)])
def test_l1_reads_one_warp_group_per_sm(programs: int, warps: int, fires: bool) -> None:
    from optimizer.kernel.features import extract_features
    from optimizer.ladder.causes.code import code_findings

    src = (KERNELS / f"{KERNEL}.py").read_text()
    rec = {"kernel": "persistent_mm_kernel", "grid": [programs], "launches": 1, "signature": {},
           "constexprs": {"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": programs}, "numel": {},
           "options": {"num_warps": warps}}
    refs = [r.reference for f in code_findings(extract_features(src), [rec]) if f.cause == "small_dot_tiles"
            for r in f.supporting]
    assert ("one_warp_group_per_sm" in refs) is fires


def test_a_tile_sized_increment_is_no_program_stride() -> None:
    """``range(0, K, BK)`` (or ``tl.arange(0, BM)``, ``a_ptrs += BK * s``) with a grid that happens to equal the tile
    is no persistent loop."""
    from optimizer.kernel.features import extract_features
    from optimizer.ladder.causes.code import code_findings

    src = (KERNELS / f"{KERNEL}.py").read_text()
    rec = {"kernel": "persistent_mm_kernel", "grid": [64], "launches": 1, "signature": {},
           "constexprs": {"BM": 128, "BN": 128, "BK": 64, "PROGRAMS": 4}, "numel": {}}
    refs = [r.reference for f in code_findings(extract_features(src), [rec]) for r in f.supporting]
    assert "one_warp_group_per_sm" not in refs


HEAD_BLOCKS = '''import triton
import triton.language as tl


@triton.jit
def head_attn(q_ptr, k_ptr, o_ptr, S, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    rm = start_m * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + head * S * D + rm[:, None] * D + rd[None, :])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for n0 in range(0, S, BN):
        rn = n0 + tl.arange(0, BN)
        k = tl.load(k_ptr + head * S * D + rd[:, None] + rn[None, :] * D)
        acc += tl.dot(q, k)
    tl.store(o_ptr + head * S * BN + rm[:, None] * BN + tl.arange(0, BN)[None, :], acc)


def forward(q, k, o):
    head_attn[(q.shape[1] // 128, q.shape[0])](q, k, o, q.shape[1], D=64, BM=128, BN=64)
'''


def test_l2_order_is_refuted_when_axis_0_neighbours_share_the_loop_operands() -> None:
    """Query blocks of one head along axis 0, K tiles that depend on the head (axis 1) only: no regrouping helps."""
    from optimizer.kernel.features import extract_features
    from optimizer.ladder.causes.code import code_findings

    rec = {"kernel": "head_attn", "grid": [64, 256], "launches": 1, "signature": {},
           "constexprs": {"D": 64, "BM": 128, "BN": 64}, "numel": {}}
    found = [f for f in code_findings(extract_features(HEAD_BLOCKS), [rec]) if f.cause == "l2_unfriendly_order"]
    assert found and found[0].confidence == 0.0 and found[0].refute_strength == 1.0
    # the K tile indexed by the query block (axis 0) is re-read per program: the order finding stays
    per_block = HEAD_BLOCKS.replace("rn[None, :] * D)", "rn[None, :] * D + start_m)")
    found = [f for f in code_findings(extract_features(per_block), [rec]) if f.cause == "l2_unfriendly_order"]
    assert found and found[0].confidence > 0


def test_an_autotuned_kernel_is_judged_by_its_largest_config_not_the_recorded_one() -> None:
    """A CPU run records whichever config the interpreter's autotuner picked (here 32x32x32); the GPU picks among all
    of them, so a list holding 128x128x64 is no small-tile evidence, and a list of small tiles only is."""
    from optimizer.kernel.features import extract_features
    from optimizer.ladder.causes.code import code_findings

    src = (KERNELS / f"{KERNEL}.py").read_text()
    rec = {"kernel": "persistent_mm_kernel", "grid": [300], "launches": 1, "signature": {},
           "constexprs": {"BM": 32, "BN": 32, "BK": 32, "PROGRAMS": 2}, "numel": {}}

    def small(text: str) -> list[str]:
        return [r.detail for f in code_findings(extract_features(text), [rec]) if f.cause == "small_dot_tiles"
                for r in f.supporting]

    assert small(src) == []
    only_small = src.replace("{'BM': 128, 'BN': 128, 'BK': 64,", "{'BM': 64, 'BN': 64, 'BK': 64,")
    assert small(only_small) == ["largest of 3 autotune configs 64x64x64"]
