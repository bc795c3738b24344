"""repeated_index_loads: a tile loaded at row index offs // R is loaded once per distinct row and repeated in
registers (interpreter outputs, sm90 TTGIR, refusals, and the L1 fact that decides it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rewrite_support import KERNELS, load, rewrite, same_outputs

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe
from optimizer.rewrite.registry import KNOB_KINDS

RECIPE = {"kind": "repeated_index_loads", "params": {}}
KERNEL = "int4_rows_matmul"


def _apply(src: str) -> str:
    return apply_recipe(RECIPE, RecipeContext(source=src), compile_check=False).source


def test_packed_rows_are_loaded_once_and_outputs_match(tmp_path: Path) -> None:
    res = rewrite(KERNEL, RECIPE)
    src = res.source
    assert "q_ptrs = qw_ptr + _ladder_run_heads(offs_k // 8, 8)[:, None] * stride_qk + offs_n[None, :]" in src
    assert "q = _ladder_repeat_rows(tl.load(q_ptrs), 8)" in src
    assert 'tl.static_assert(BK % 8 == 0, "BK must be a multiple of 8' in src
    # the static assert follows the docstring, the helpers precede the kernel
    assert src.index('"""C[M, N] = A') < src.index("tl.static_assert(") and src.index(
        "def _ladder_repeat_rows") < src.index("def w4_matmul_kernel")
    assert "repeated_index_loads" not in KNOB_KINDS
    same_outputs(KERNEL, src, tmp_path, atol=2e-2, rtol=1e-2)


def _ttgir(path: Path) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load(path, interpret=False).w4_matmul_kernel
    sig = {"a_ptr": "*fp16", "qw_ptr": "*i32", "scale_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
           "K": "i32", "stride_am": "i32", "stride_qk": "i32", "stride_cm": "i32", "BM": "constexpr",
           "BN": "constexpr", "BK": "constexpr"}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(10)}
    k = triton.compile(ASTSource(fn, sig, {"BM": 16, "BN": 32, "BK": 64}, attrs), target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 3})
    return k.asm["ttgir"]


@pytest.mark.slow
def test_the_packed_tile_copy_shrinks_eightfold(tmp_path: Path) -> None:
    pytest.importorskip("triton.backends.nvidia")
    base, new = tmp_path / "base.py", tmp_path / "new.py"
    base.write_text((KERNELS / f"{KERNEL}.py").read_text())
    new.write_text(rewrite(KERNEL, RECIPE).source)
    before, after = _ttgir(base), _ttgir(new)
    assert "tensor<64x32x!tt.ptr<i32>" in before  # BK x BN words copied for BK / 8 distinct rows
    assert "tensor<8x32x!tt.ptr<i32>" in after and "tensor<64x32x!tt.ptr<i32>" not in after


def test_refusals_name_the_reason() -> None:
    src = (KERNELS / f"{KERNEL}.py").read_text()
    masked = src.replace("q = tl.load(q_ptrs)", "q = tl.load(q_ptrs, mask=offs_n[None, :] < N, other=0)")
    with pytest.raises(NotApplicable, match="a masked load"):
        _apply(masked)
    odd = src.replace("offs_k[:, None] // 8", "offs_k[:, None] // 6")
    with pytest.raises(NotApplicable, match="not a power of two"):
        _apply(odd)
    shifted = src.replace("offs_k = tl.arange(0, BK)", "offs_k = tl.arange(0, BK) + 3")
    with pytest.raises(NotApplicable, match="plus multiples of constexpr blocks"):
        _apply(shifted)
    twice = src.replace("        q = tl.load(q_ptrs)\n", "        q = tl.load(q_ptrs)\n        q2 = tl.load(q_ptrs)\n")
    with pytest.raises(NotApplicable, match="read by more than one"):
        _apply(twice)
    plain = src.replace("offs_k[:, None] // 8", "offs_k[:, None]")
    with pytest.raises(NotApplicable, match="no tl.load whose address indexes"):
        _apply(plain)


def test_l1_reads_the_fact_as_redundant_passes() -> None:
    from optimizer.kernel.features import extract_features
    from optimizer.ladder.causes.code import code_findings

    src = (KERNELS / f"{KERNEL}.py").read_text()
    feats = extract_features(src)
    assert "repeated_index_load" in feats.tokens
    rec = {"kernel": "w4_matmul_kernel", "grid": [2, 2], "launches": 1, "signature": {},
           "constexprs": {"BM": 16, "BN": 32, "BK": 64}, "numel": {}}
    found = [f for f in code_findings(feats, [rec]) if f.cause == "redundant_passes"]
    assert found and found[0].source_lines == [src.splitlines().index("        q = tl.load(q_ptrs)") + 1]
    fixed = src.replace("offs_k[:, None] // 8", "offs_k[:, None]")
    assert "repeated_index_load" not in extract_features(fixed).tokens
