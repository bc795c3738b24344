"""A kernel launched through a variable: pinned to a launch by name under an ``is`` guard, then transformed."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.indirect_launch import pin_indirect_launch

SRC = (KERNELS / "indirect_row_stats.py").read_text()


def test_the_default_kernel_is_pinned_under_a_guard() -> None:
    new, why = pin_indirect_launch(SRC)
    assert "implementation is row_center_kernel (its default)" in why
    launcher = new.split("def launch(")[1].split("def center(")[0]
    pinned = "if implementation is row_center_kernel:\n        row_center_kernel[(n_rows,)](x, y, n_cols, BLOCK=16)"
    assert pinned in launcher
    assert "else:\n        implementation[(n_rows,)](x, y, n_cols, BLOCK=16)" in launcher  # any other kernel as before


def test_a_structural_transform_acts_on_the_pinned_launch(tmp_path: Path) -> None:
    res = rewrite("indirect_row_stats", {"kind": "row_resident", "params": {"values": [32]}})
    assert res.description.startswith("kernel launched through a variable pinned")
    assert "row_center_kernel_rows[(n_rows,)]" in res.source and "if n_cols <= 32:" in res.source
    same_outputs("indirect_row_stats", res.source, tmp_path)  # 70 columns: the original kernel; 16: the copy


def test_module_alias_is_replaced_by_its_kernel() -> None:
    src = SRC.replace("def launch(x, implementation):", "kernel = row_center_kernel\n\n\ndef launch(x, _unused=None):")
    src = src.replace("implementation[(n_rows,)]", "kernel[(n_rows,)]")
    new, why = pin_indirect_launch(src)
    assert "kernel -> row_center_kernel" in why and "    row_center_kernel[(n_rows,)](x, y, n_cols" in new


def test_refused_when_the_default_is_ambiguous() -> None:
    two = SRC.replace("def center(x, implementation=row_center_kernel):",
                      "def copy(x, implementation=row_copy_kernel):\n    return launch(x, implementation)\n\n\n"
                      "def center(x, implementation=row_center_kernel):")
    with pytest.raises(NotApplicable, match="no launch through a variable resolves"):
        pin_indirect_launch(two)
    with pytest.raises(NotApplicable, match="no kernel of the candidate is launched"):
        rewrite_src(two)


def rewrite_src(src: str) -> None:
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    apply_recipe({"kind": "row_resident", "params": {"values": [32]}}, RecipeContext(source=src))
