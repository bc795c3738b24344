"""chunked_row_passes: a spilling whole-row block reduced in dependent passes and written after them -> a copy with
one chunk loop per pass, launched for long rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.rewrite.chunked_passes import ChunkedRowPasses
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import applier
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

SRC = (KERNELS / "wide_row_xent.py").read_text()
SPILL = ["ir:register_spill"]


def _apply(src: str, params: dict | None = None, evidence: list[str] | None = None):  # noqa: ANN202
    return applier(ChunkedRowPasses())(params or {}, RecipeContext(source=src, evidence=SPILL if evidence is None
                                                                    else evidence))


def test_passes_and_dispatch(tmp_path: Path) -> None:
    res = _apply(SRC, {"values": [16], "limits": [32]})
    kernel = res.source.split("def xent_kernel_chunked(")[1].split("class ModelNew")[0]
    assert kernel.count("for chunk_start in range(0, N, CHUNK):") == 3  # max, sum of exp, the write pass
    assert "red = tl.max(acc, axis=0)" in kernel and "red2 = tl.sum(acc2, axis=0)" in kernel
    assert "logits_c3 = logits_c2 - red" in kernel and "probs_c = tl.log(red2) - logits_c3" in kernel
    # the scalar statements after the store stay after the write pass
    assert kernel.index("tl.store(WRIT_PROBS_c") < kernel.index("tl.debug_barrier()") < kernel.index(
        "probs = tl.load(READ_PROBS)")
    host = res.source.split("class ModelNew")[1]
    assert "if n_cols > 32:\n            xent_kernel_chunked[(n_rows,)](" in host and "CHUNK=16)" in host
    assert "        else:\n            xent_kernel[(n_rows,)](" in host
    # 70 columns take the chunked copy (five 16-wide chunks, the last partly masked), 16 the original kernel
    same_outputs("wide_row_xent", res.source, tmp_path, atol=1e-5, rtol=1e-5)


def test_default_points_keep_short_rows_on_the_original() -> None:
    res = _apply(SRC)
    assert res.applied == {"LIMIT": 32768, "CHUNK": 4096} and "if n_cols > 32768:" in res.source


def test_refusals() -> None:
    with pytest.raises(NotApplicable, match="no register_spill evidence"):
        _apply(SRC, evidence=[])
    rebinding = SRC.replace("    tl.store(WRIT_PROBS, probs, mask=cols < N)\n",
                            "    tl.store(WRIT_PROBS, probs * idx, mask=cols < N)\n    idx = row\n")
    with pytest.raises(NotApplicable, match="rebinds idx, which a block statement reads"):
        _apply(rebinding)
    two_d = SRC.replace("logits = logits.to(tl.float32)", "logits = logits.to(tl.float32)[None, :]")
    with pytest.raises(NotApplicable, match="subscripts a value"):
        _apply(two_d)
    scan = SRC.replace("probs = tl.log(tl.sum(tl.exp(logits), 0)) - logits",
                       "probs = tl.cumsum(logits, 0) - tl.max(logits, 0)")
    with pytest.raises(NotApplicable, match="calls tl.cumsum"):
        _apply(scan)
    unmasked = SRC.replace("tl.store(WRIT_PROBS, probs, mask=cols < N)", "tl.store(WRIT_PROBS, probs)")
    with pytest.raises(NotApplicable, match="is not masked"):
        _apply(unmasked)


def test_the_spill_relief_recipe_reaches_it_when_one_pass_cannot_hold_the_row() -> None:
    recipe = {"kind": "register_spill_relief", "params": {"values": [1024, 2048], "search": {"num_warps": [4, 8]}}}
    res = apply_recipe(recipe, RecipeContext(source=SRC, evidence=["cause:register_spills"]), compile_check=False)
    assert "xent_kernel_chunked" in res.source and "3 loop(s)" in res.description


def test_an_early_return_and_a_constexpr_if_stay_with_their_passes(tmp_path: Path) -> None:
    """A per-row flag's early return before the block runs once; ``if HAS_TEMP: x = ... else: x = ...`` after it is a
    compile-time choice every pass recomputes (a conditional assignment per branch)."""
    src = (KERNELS / "wide_flag_softmax.py").read_text()
    res = _apply(src, {"values": [16], "limits": [32]})
    kernel = res.source.split("def flag_softmax_kernel_chunked(")[1].split("class ModelNew")[0]
    assert kernel.count("for chunk_start in range(0, n_cols, CHUNK):") == 3
    assert "if tl.load(skip_ptr + row) != 0:\n        return" in kernel
    assert kernel.count("x_c2 = (x_c / temp) if (HAS_TEMP) else x_c") == 3 and "if (not (HAS_TEMP))" in kernel
    same_outputs("wide_flag_softmax", res.source, tmp_path, atol=1e-5, rtol=1e-5)
    runtime = src.replace("    if HAS_TEMP:\n", "    if temp > 1.0:\n")
    with pytest.raises(NotApplicable, match="tests a runtime value"):
        _apply(runtime)
    looped = src.replace("    if HAS_TEMP:\n        x = x / temp\n",
                         "    for _ in range(2):\n        x = x / temp\n    if HAS_TEMP:\n        x = x / temp\n")
    with pytest.raises(NotApplicable, match="a for statement after the row block"):
        _apply(looped)
