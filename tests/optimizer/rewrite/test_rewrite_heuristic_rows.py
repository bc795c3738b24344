"""heuristic_rows: a row count set by @triton.heuristics is raised for short rows in the heuristic itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import applier
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.heuristic_rows import HeuristicRows
from optimizer.rewrite.recipe import apply_recipe

SRC = (KERNELS / "heur_rows_norm.py").read_text()
REC = {"kernel": "rms_rows_kernel", "constexprs": {"BLOCK_ROWS": 1, "BLOCK_COLS": 1024}, "grid": [32768]}


def test_the_heuristic_is_edited_not_the_launch(tmp_path: Path) -> None:
    res = apply_recipe({"kind": "rows_per_program", "params": {}}, RecipeContext(source=SRC, launches=[REC]))
    new = ('"BLOCK_ROWS": lambda args: max(rows_heuristic(args), min(64, max(1, 2048 // '
           '(triton.next_power_of_2(args["n_cols"])))))')
    assert new in res.source and "heuristics BLOCK_ROWS" in res.description
    assert "rms_rows_kernel[grid](x, y, n_rows, n_cols)" in res.source  # the launch and grid are unchanged
    # 300 columns: 4 rows a program over 7 rows (a masked last tile); 1000 columns: 2 rows a program
    same_outputs("heur_rows_norm", res.source, tmp_path, atol=1e-5, rtol=1e-5)


def test_points_follow_the_recorded_launch() -> None:
    ctx = RecipeContext(source=SRC, launches=[REC])
    tr = HeuristicRows()
    res = [applier(tr)({}, ctx)]
    assert res[0].applied == {"TILE": 2048}
    # a 4096-element row already fills the largest tile (rows per program gained up to 4096 on the H200)
    wide = {**REC, "constexprs": {"BLOCK_ROWS": 1, "BLOCK_COLS": 4096}}
    with pytest.raises(NotApplicable, match="no tile size gives a recorded launch more rows"):
        applier(tr)({}, RecipeContext(source=SRC, launches=[wide]))
    assert applier(tr)({}, RecipeContext(source=SRC, launches=[{**REC, "constexprs": {
        "BLOCK_ROWS": 1, "BLOCK_COLS": 2048}}])).applied == {"TILE": 4096}
    few = {**REC, "grid": [300]}  # 300 programs: fewer would leave SMs idle
    with pytest.raises(NotApplicable, match="two programs per SM"):
        applier(tr)({}, RecipeContext(source=SRC, launches=[few]))


def test_refused_outside_its_domain() -> None:
    launch_rows = SRC.replace('"BLOCK_ROWS": rows_heuristic,\n                    ', "").replace(
        "rms_rows_kernel[grid](x, y, n_rows, n_cols)", "rms_rows_kernel[grid](x, y, n_rows, n_cols, BLOCK_ROWS=1)")
    with pytest.raises(NotApplicable, match="no META"):
        applier(HeuristicRows())({}, RecipeContext(source=launch_rows))
    one_d = SRC.replace("[:, None]", "").replace("[None, :]", "")
    with pytest.raises(NotApplicable, match="no 2-D tile"):
        applier(HeuristicRows())({}, RecipeContext(source=one_d))
