"""The compile budget of a recorded launch configuration (``optimizer.ir.compile_cost``) and the choices it drives:
which configuration L3 diagnoses (``hot_launch``) and which the static account compiles (``launch_accounts``)."""

from __future__ import annotations

from pathlib import Path

from optimizer.ir.cached import hot_launch
from optimizer.ir.compile_cost import MAX_PER_THREAD, budget_note, per_thread, tile_elements, within_budget
from optimizer.ladder.gap_account import launch_accounts

ROW_KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def row_softmax(x_ptr, y_ptr, n_cols, BLOCK_ROWS: tl.constexpr, BLOCK_COLS: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = tl.arange(0, BLOCK_COLS)
    ptrs = x_ptr + rows[:, None] * n_cols + cols[None, :]
    x = tl.load(ptrs, mask=cols[None, :] < n_cols, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 1)[:, None])
    tl.store(y_ptr + rows[:, None] * n_cols + cols[None, :], e / tl.sum(e, 1)[:, None], mask=cols[None, :] < n_cols)


@triton.jit
def unknown_extent(x_ptr, n):
    offs = tl.arange(0, n.shape)
    tl.store(x_ptr + offs, offs)
'''


def _rec(path: Path, warps: int, cols: int = 65536, rows: int = 1, launches: int = 1,
         kernel: str = "row_softmax") -> dict:
    return {"kernel": kernel, "file": str(path), "grid": [8192], "launches": launches,
            "constexprs": {"BLOCK_ROWS": rows, "BLOCK_COLS": cols}, "ir_args": {"n_cols": 50257},
            "options": {"num_warps": warps}, "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32"}}


def test_tile_is_the_two_largest_extents_over_the_threads(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(ROW_KERNEL)
    assert tile_elements(_rec(src, 1, rows=4)) == 4 * 65536
    assert per_thread(_rec(src, 1)) == 65536 / 32
    assert per_thread(_rec(src, 8)) == 65536 / 256 == MAX_PER_THREAD
    assert within_budget(_rec(src, 8)) and not within_budget(_rec(src, 4))
    note = budget_note(_rec(src, 1))
    assert "2048 values per thread" in note and "not compiled" in note
    assert budget_note(_rec(src, 32)) == ""


def test_no_estimate_compiles_as_before(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(ROW_KERNEL)
    rec = _rec(src, 1, kernel="unknown_extent")
    assert tile_elements(rec) is None and within_budget(rec) and budget_note(rec) == ""
    assert tile_elements({**rec, "file": str(tmp_path / "missing.py")}) is None


def _warps(recs: list[dict], *, prefer_budget: bool = False) -> int:
    rec = hot_launch(recs, prefer_budget=prefer_budget)
    assert rec is not None
    return int(rec["options"]["num_warps"])


def test_hot_launch_prefers_a_configuration_within_the_budget(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(ROW_KERNEL)
    # a CPU dry autotuner keeps (launches again) its first configuration: one warp on a 65536-wide row
    recs = [_rec(src, 1, launches=2), _rec(src, 4), _rec(src, 8), _rec(src, 32)]
    assert _warps(recs, prefer_budget=True) == 8
    # a GPU's record: the configuration its autotuner kept is diagnosed whatever its cost
    assert _warps(recs) == 1
    # within the budget the most launched one still wins
    small = [_rec(src, 1, cols=1024, launches=2), _rec(src, 8, cols=1024)]
    assert _warps(small, prefer_budget=True) == 1
    # none within it: the fewest values per thread
    assert _warps([_rec(src, 1, launches=3), _rec(src, 4)], prefer_budget=True) == 4


def test_accounts_name_the_configurations_they_did_not_compile(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(ROW_KERNEL)
    accounts, notes = launch_accounts([_rec(src, 1), _rec(src, 2)], target="cuda:90", cache_dir=tmp_path)
    assert accounts == []
    assert len(notes) == 2 and all("not compiled" in n for n in notes)
    assert "num_warps=1" in notes[0] and "2048 values per thread" in notes[0]
