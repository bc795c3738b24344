"""Row regrid: a flat kernel reading a per-row value at offs // D becomes one program per row, so kernel chain
fusion can fuse it with the row kernel that produced the value."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.row_regrid import regrid_row_broadcast


def test_flat_kernel_becomes_a_row_loop_with_the_row_value_hoisted(tmp_path: Path) -> None:
    new, what = regrid_row_broadcast((KERNELS / "chain_flat_rowscale.py").read_text())
    body = new[new.index("def scale_bias_kernel"):new.index("class ModelNew")]
    assert "row = tl.program_id(0)\n    r = tl.load(rms_ptr + row)\n    for col0 in range(0, n_cols, BLOCK):" in body
    assert "offs = row * n_cols + cols" in body and "mask = (cols < n_cols) & (offs < n)" in body
    assert "b = tl.load(b_ptr + cols, mask=mask, other=0.0)" in body and "//" not in body and "%" not in body
    assert "scale_bias_kernel[(M,)](x, rms, b, y, M * N, N, BLOCK=64)" in new
    assert "1 per-row load(s) hoisted" in what
    same_outputs("chain_flat_rowscale", new, tmp_path)


def test_chain_fusion_regrids_first_when_the_grids_differ(tmp_path: Path) -> None:
    res = rewrite("chain_flat_rowscale", {"kind": "kernel_chain_fusion", "params": {}})
    assert "one program per row" in res.description and "-> one fused_row_rms_scale_bias_kernel" in res.description
    assert "rms = torch.empty" not in res.source and res.source.count("[(M,)]") == 1  # the scratch buffer is gone
    same_outputs("chain_flat_rowscale", res.source, tmp_path)


def test_refusals_name_the_reason() -> None:
    src = (KERNELS / "chain_flat_rowscale.py").read_text()
    with pytest.raises(NotApplicable, match=r"element count M \* N \+ 1 is not rows|does not pass n"):
        regrid_row_broadcast(src.replace("triton.cdiv(M * N, 64)", "triton.cdiv(M * N + 1, 64)"))
    with pytest.raises(NotApplicable, match="no `offs // D`"):
        regrid_row_broadcast(src.replace("offs // n_cols", "offs * 0").replace("offs % n_cols", "offs * 0"))
    with pytest.raises(NotApplicable, match=r"launch different grids\); row regrid: .*no `offs // D`"):  # both reasons kept
        apply_recipe({"kind": "kernel_chain_fusion", "params": {}},
                     RecipeContext(source=src.replace("offs // n_cols", "offs * 0").replace("offs % n_cols", "offs * 0")))
