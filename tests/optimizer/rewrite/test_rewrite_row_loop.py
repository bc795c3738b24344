"""rows_per_program (loop form) on kernels that advance pointers inside the row: saved and restored per row."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import rewrite, same_outputs

RECIPE = {"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [4]}}


@pytest.mark.parametrize(("kernel", "saved"), [
    ("row_rms_advance", ["x_ptr", "y_ptr"]),
    ("row_sum_stride_loop", ["x_ptr"]),
    ("row_guarded_advance", ["x_ptr", "y_ptr"]),
])
def test_advanced_pointers_restart_at_every_row(kernel: str, saved: list[str], tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE)
    assert "tl.static_range(ROWS_PER_PROGRAM)" in res.source and res.applied == {"ROWS_PER_PROGRAM": 4}
    for name in saved:
        assert f"{name}_rpp0 = {name}\n" in res.source and f"{name} = {name}_rpp0\n" in res.source
    assert f"{saved} saved before the row loop" in res.description
    assert "remaining_rpp0" not in res.source  # defined inside the row: nothing carries over
    same_outputs(kernel, res.source, tmp_path)
