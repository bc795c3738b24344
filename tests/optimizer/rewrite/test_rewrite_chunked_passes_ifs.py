"""chunked_row_passes on a launch with ``*args`` and compile-time ``if`` / ``elif`` chains holding augmented
assignments (optimizer.rewrite.chunked_ifs): every pass recomputes the arm the compiler keeps."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.rewrite.chunked_ifs import compile_time_branches
from optimizer.rewrite.chunked_passes import ChunkedRowPasses
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import applier
from optimizer.rewrite.errors import NotApplicable

SRC = (KERNELS / "wide_weighted_lse.py").read_text()


def _apply(src: str) -> str:
    ctx = RecipeContext(source=src, evidence=["ir:register_spill"])
    return applier(ChunkedRowPasses())({"values": [16], "limits": [32]}, ctx).source


def _branches(text: str, static: set[str]) -> list[str] | str:
    out = compile_time_branches(cst.ensure_type(cst.parse_statement(text), cst.If), static)
    return out if isinstance(out, str) else [cst.Module([]).code_for_node(s).strip() for s in out]


def test_an_elif_chain_of_augmented_assignments_becomes_conditional_assignments() -> None:
    chain = "if M == 1:\n    a /= n\nelif M == 2:\n    a *= s\nelse:\n    a = a + 1\n"
    assert _branches(chain, {"M"}) == ["a = (a / (n)) if (M == 1) else a",
                                       "a = (a * (s)) if ((not (M == 1)) and (M == 2)) else a",
                                       "a = (a + 1) if ((not (M == 1)) and (not (M == 2))) else a"]
    assert "tests a runtime value (n;" in _branches("if n > 1:\n    a = 1\n", {"M"})
    assert "holds `tl.store(p, a)`, not an assignment" in _branches("if M:\n    tl.store(p, a)\n", {"M"})
    assert "not an assignment" in _branches("if M:\n    if M:\n        a = 1\n", {"M"})


def test_star_args_launch_and_augmented_branches_chunk_and_match(tmp_path: Path) -> None:
    res = _apply(SRC)
    kernel = res.split("def weighted_lse_kernel_chunked(")[1].split("class ModelNew")[0]
    assert kernel.count("for chunk_start in range(0, n_cols, CHUNK):") == 3  # max, sum of exp, the write pass
    assert kernel.count("if (WEIGHTED) else x_c") == 3  # the in-place weight, recomputed in every pass
    assert "lse = (lse / (n_cols)) if (MODE == \"mean\") else lse" in kernel
    host = res.split("class ModelNew")[1]
    assert "if n_cols > 32:" in host and "*x.stride(), 0.5," in host and "CHUNK=16)" in host
    # 70, 50 and 40 columns take the chunked copy through each arm of the MODE chain, 16 the original kernel
    same_outputs("wide_weighted_lse", res, tmp_path, atol=1e-5, rtol=1e-5)


def test_a_star_args_launch_that_hides_the_row_length_is_refused() -> None:
    hidden = SRC.replace("(x, w, y, lse, n_cols, *x.stride(), 0.5,", "(*(x, w, y, lse), n_cols, *x.stride(), 0.5,")
    with pytest.raises(NotApplicable, match="does not pass n_cols by keyword or before any"):
        _apply(hidden)
    store = SRC.replace("        lse += scale\n", "        tl.store(lse_ptr + row, lse)\n")
    with pytest.raises(NotApplicable, match="not an assignment to a name"):
        _apply(store)


def test_an_in_place_update_of_the_row_block_is_a_single_assignment_per_pass(tmp_path: Path) -> None:
    """``x -= mx`` after the max reads the row block: it becomes ``x_c = x_c - (mx)`` in the passes after the max."""
    src = SRC.replace("    mx = tl.max(x, 0)\n", "    mx = tl.max(x, 0)\n    x -= mx\n").replace(
        "tl.exp(x - mx)", "tl.exp(x)").replace("x - lse, mask", "x + mx - lse, mask")
    res = _apply(src)
    kernel = res.split("def weighted_lse_kernel_chunked(")[1].split("class ModelNew")[0]
    assert kernel.count("x_c4 = x_c3 - (mx)") == 2  # the sum-of-exp pass and the write pass
    same_outputs("wide_weighted_lse", res, tmp_path, atol=1e-5, rtol=1e-5)
