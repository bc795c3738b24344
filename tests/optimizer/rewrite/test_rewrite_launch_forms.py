"""Launch forms real launchers use: arguments packed into *args / **kwargs are spelled out before a transform."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.launch_forms import inline_launch_args

RECIPE = {"kind": "block_scale", "params": {"values": [1024, 2048, 4096, 512]}}


def test_packed_launch_is_spelled_out_then_scaled(tmp_path: Path) -> None:
    res = rewrite("packed_launch_flat", RECIPE)
    assert "launch arguments spelled out" in res.description
    assert "add_mul_kernel[grid](x, y, z, out, n, BLOCK_SIZE=block, num_warps=" in res.source
    assert "args = (" not in res.source and "meta = dict(" not in res.source
    assert "block = 1024" in res.source
    same_outputs("packed_launch_flat", res.source, tmp_path)


def test_a_packing_used_twice_is_left_alone() -> None:
    src = (KERNELS / "packed_launch_flat.py").read_text().replace("        return out", "        print(meta)\n        return out")
    with pytest.raises(NotApplicable, match="no launch's \\*args / \\*\\*kwargs"):
        inline_launch_args(src)
    with pytest.raises(NotApplicable, match="passes \\*args / \\*\\*kwargs"):
        _apply(src)


def _apply(src: str) -> None:
    from optimizer.rewrite.context import RecipeContext
    from optimizer.rewrite.recipe import apply_recipe

    apply_recipe(RECIPE, RecipeContext(source=src))
