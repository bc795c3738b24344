"""interleaved_pairs: two stride-2 accesses of interleaved pairs become one [..., 2] tile (interpreter + sm90 PTX)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, load, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.registry import KNOB_KINDS

RECIPE = {"kind": "interleaved_pairs", "params": {}}


def test_pairs_become_tiles_and_outputs_match(tmp_path: Path) -> None:
    res = rewrite("pairs_complex_mul", RECIPE)
    assert res.applied == {"load_pairs": 2, "store_pairs": 1}
    assert ("xr, xi = tl.split(tl.load(tl.expand_dims(x_ptr + d * 2, -1) + tl.arange(0, 2), "
            "mask=tl.expand_dims(mask, -1), other=0.0))") in res.source
    assert "tl.load(x_ptr + d * 2 + 1" not in res.source and "tl.load(w_ptr + 2 * d + 1" not in res.source
    assert "scale = 2.0" in res.source  # a statement between the two loads stays where it was
    assert "tl.join(" in res.source and "tl.store(out_ptr + d * 2 + 1" not in res.source
    assert "interleaved_pairs" not in KNOB_KINDS
    same_outputs("pairs_complex_mul", res.source, tmp_path)  # 300 pairs: the last block masked


def _memory_ops(path: Path) -> dict[str, int]:
    """Global load / store instructions per kind in the kernel's cuda:90 PTX (compile-only, no GPU)."""
    import re
    from collections import Counter

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load(path, interpret=False).cmul_kernel
    sig = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "n_pairs": "i32", "BLOCK": "constexpr"}
    aligned = {(i,): [["tt.divisibility", 16]] for i in range(3)}  # the JIT's specialization of 16-byte pointers
    src = ASTSource(fn, signature=sig, constexprs={"BLOCK": 64}, attrs=aligned)
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                         options={"num_warps": 1}).asm["ptx"]
    return dict(Counter(m.group(1) for m in re.finditer(r"\b((?:ld|st)\.global\S*)", ptx)))


def test_the_compiled_kernel_changes_on_sm90(tmp_path: Path) -> None:
    """Not a no-op for the GPU: 4 scalar loads and 2 scalar stores per element become 2 and 1 two-element vectors."""
    res = rewrite("pairs_complex_mul", RECIPE)
    (tmp_path / "cand.py").write_text(res.source)
    base, cand = _memory_ops(KERNELS / "pairs_complex_mul.py"), _memory_ops(tmp_path / "cand.py")
    assert base != cand
    assert sum(v for k, v in cand.items() if k.startswith("ld")) < sum(v for k, v in base.items() if k.startswith("ld"))
    assert any(".v2" in k for k in cand) and not any(".v2" in k for k in base)


@pytest.mark.parametrize(("old", "new", "reason"), [
    # the second member reads another mask: not one tile
    ("xi = tl.load(x_ptr + d * 2 + 1, mask=mask, other=0.0)", "xi = tl.load(x_ptr + d * 2 + 1, mask=d < 3, other=0.0)",
     None),
    # a store between the loads may write what the second one reads
    ("    scale = 2.0\n", "    tl.store(out_ptr + d, xr, mask=mask)\n", None),
    # unit stride: neighbouring lanes already touch neighbouring elements
    ("d * 2", "d", None),
])
def test_loads_outside_the_domain_stay(old: str, new: str, reason: str | None) -> None:
    src = (KERNELS / "pairs_complex_mul.py").read_text()
    assert old in src
    src = src.replace(old, new)
    try:
        res = apply_recipe(RECIPE, RecipeContext(source=src))
    except NotApplicable as exc:
        assert "interleaved pairs" in str(exc)
        return
    assert "xr, xi = tl.split" not in res.source


def test_scalar_pairs_are_refused() -> None:
    src = """
import triton
import triton.language as tl


@triton.jit
def k(p, q):
    i = tl.program_id(0)
    a = tl.load(p + i * 2)
    b = tl.load(p + i * 2 + 1)
    tl.store(q + i, a + b)


def run(p, q):
    k[(4,)](p, q)
"""
    with pytest.raises(NotApplicable, match="interleaved pairs"):
        apply_recipe(RECIPE, RecipeContext(source=src))
