"""alignment_hints: true hints for sizes that are not multiples of 16, checked in the interpreter and in sm_90 PTX."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from optimizer.rewrite.alignment import count_async_copies
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

SUITE = Path(__file__).parents[2] / "benchmarks" / "suite"
RECIPE = {"kind": "alignment_hints", "params": {}}


def hinted(op: str) -> str:
    return apply_recipe(RECIPE, RecipeContext(source=(SUITE / op / "initial.py").read_text(), launches=[])).source


def test_hints_sit_on_tensors_and_align_is_computed_at_the_launch() -> None:
    src = hinted("matmul_bias_relu")
    assert "tl.multiple_of(offs_m[:, None] * stride_xm, [ALIGN, ALIGN])" in src
    assert "tl.max_constancy(k[None, :] < K, [1, ALIGN])" in src
    assert "tl.max_constancy(k[:, None] < K, [ALIGN, 1])" in src
    assert "ALIGN: tl.constexpr" in src and "ALIGN=_ladder_align(K, M, N," in src
    assert "(8 if x.stride(1) == 1 else x.stride(1))" in src  # a unit stride keeps an aligned index aligned
    ns: dict = {}
    exec(src.split("@triton.jit")[0].split("import triton.language as tl")[1], ns)  # noqa: S102 - the helper alone
    assert ns["_ladder_align"](3000, 5000, 6000, 32) == 8 and ns["_ladder_align"](3000, 5001) == 1
    assert ns["_ladder_align"](4100, 64) == 4


ROWS = """import torch
import triton
import triton.language as tl


@triton.jit
def row_norm(X, Y, Mean, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x_row = X + row * stride
    Y += row * stride
    x = tl.load(x_row + cols, mask=mask, other=0.0)
    m = tl.sum(x, axis=0) / n_cols
    tl.store(Mean + row * 1, m)
    tl.store(Y + cols, x - m, mask=mask)


def forward(x):
    y, mean = torch.empty_like(x), torch.empty(x.shape[0], device=x.device)
    row_norm[(x.shape[0],)](x, y, mean, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return y, mean
"""

FIXED = """import torch
import triton
import triton.language as tl


@triton.jit
def fixed(X, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(X + offs, tl.load(X + offs) * 2)


def forward(x):
    fixed[(1,)](x, BLOCK=1024)
    return x
"""


def _apply(src: str) -> str:
    return apply_recipe(RECIPE, RecipeContext(source=src, launches=[]), compile_check=False).source


def test_kernels_without_stride_products_or_bounds_are_refused() -> None:
    with pytest.raises(NotApplicable, match="no broadcast stride products"):
        _apply(FIXED)


def test_row_form_hints_row_offsets_and_the_lane_mask_only() -> None:
    """A program per row: the scalar row offsets next to the lane index (a pointer variable, a ``+=``) and the lane
    mask are hinted; the per-row mean (a scalar store with a unit stride) is not, so ALIGN is not forced to 1."""
    src = _apply(ROWS)
    assert "x_row = X + tl.multiple_of(row * stride, ALIGN)" in src
    assert "Y += tl.multiple_of(row * stride, ALIGN)" in src
    assert "mask = tl.max_constancy(cols < n_cols, ALIGN)" in src
    assert "Mean + row * 1" in src
    assert "ALIGN=_ladder_align(x.shape[1], x.stride(0), triton.next_power_of_2(x.shape[1]))" in src


def test_row_form_validates_in_the_interpreter(tmp_path: Path) -> None:
    """Run in a child process: the interpreter patches triton.language in the process that runs it."""
    import os
    import subprocess
    import sys

    (tmp_path / "rows_hinted.py").write_text(_apply(ROWS))
    check = (
        "import torch, rows_hinted\n"
        "x = torch.randn(6, 3000)\n"
        "y, mean = rows_hinted.forward(x)\n"
        "torch.testing.assert_close(mean, x.mean(dim=1), rtol=1e-4, atol=1e-4)\n"
        "torch.testing.assert_close(y, x - x.mean(dim=1, keepdim=True), rtol=1e-4, atol=1e-4)\n"
        "print('ok')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_row_form_vectorizes_a_3000_column_row(tmp_path: Path) -> None:
    """fp32 rows of 3000 (a multiple of 8, not 16): scalar 32-bit loads before, 128-bit loads with ALIGN=8."""
    pytest.importorskip("triton.backends.nvidia")
    from optimizer.ir.gap_account import ptx_facts

    def ptx(src: str, align: int | None) -> str:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource

        f = tmp_path / f"rows_{align}.py"
        f.write_text(src)
        spec = importlib.util.spec_from_file_location(f"rows_{align}", f)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        fn = mod.row_norm
        consts = {"BLOCK": 4096} | ({"ALIGN": align} if align else {})
        sig = {n: "constexpr" if n in consts else "*fp32" if n in ("X", "Y", "Mean") else "i32" for n in fn.arg_names}
        attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if n in ("X", "Y", "Mean")}
        return triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": 8}).asm["ptx"]

    before, after = ptx_facts(ptx(ROWS, None)), ptx_facts(ptx(_apply(ROWS), 8))
    assert set(before["load_bits"]) == {32} and 128 not in before["load_bits"]
    assert 128 in after["load_bits"] and sum(after["load_bits"].values()) < sum(before["load_bits"].values())


def test_hinted_matmul_validates_in_the_interpreter(tmp_path: Path) -> None:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    path = tmp_path / "hinted.py"
    path.write_text(hinted("matmul_bias_relu"))
    ev = evaluate(load_problem(SUITE / "matmul_bias_relu"), path, backend="interpreter",
                  settings=LadderSettings(validation_seeds=[0]))
    assert ev.passed, ev.reason


def _ptx(path: Path, K: int, align: int | None) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location(f"cand_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = mod.linear_bias_relu_kernel
    M, N = 5000, 6000
    ints = {"M": M, "N": N, "K": K, "stride_xm": K, "stride_xk": 1, "stride_wn": K, "stride_wk": 1, "stride_ym": N,
            "stride_yn": 1}
    consts = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32} | ({"ALIGN": align} if align else {})
    sig, attrs = {}, {}
    for i, name in enumerate(fn.arg_names):  # what the JIT would specialize for these arguments
        if name in consts:
            sig[name] = "constexpr"
        elif name.endswith("_ptr"):
            sig[name], attrs[(i,)] = "*fp16", [["tt.divisibility", 16]]
        elif ints[name] == 1:
            sig[name], consts[name] = "constexpr", 1
        else:
            sig[name] = "i32"
            if ints[name] % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
    k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 3})
    return k.asm["ptx"]


@pytest.mark.slow
def test_k3000_gets_the_async_copy_pipeline_back(tmp_path: Path) -> None:
    """The H200 campaign's slowest case (K=3000 fp16, 16x slower than cuBLAS): scalar loads before, cp.async after."""
    pytest.importorskip("triton.backends.nvidia")
    base, new = tmp_path / "base.py", tmp_path / "hinted.py"
    base.write_text((SUITE / "matmul_bias_relu" / "initial.py").read_text())
    new.write_text(hinted("matmul_bias_relu"))
    cp0, ld0 = count_async_copies(_ptx(base, 3000, None))
    cp1, ld1 = count_async_copies(_ptx(new, 3000, 8))
    cp_aligned, _ = count_async_copies(_ptx(base, 4096, None))
    assert cp0 == 0 and ld0 > 32  # element-wise global loads, no async copies
    assert cp1 == cp_aligned > 0 and ld1 < ld0
    cp_off, _ = count_async_copies(_ptx(new, 3000, 1))  # ALIGN=1 (a shape that breaks the hint): plain code again
    assert cp_off == 0


def test_a_launch_reading_unbound_names_is_refused() -> None:
    """A candidate whose launch reads ``META`` outside the grid lambda is broken already; the hint is not added."""
    broken = ROWS.replace("x.shape[1], BLOCK=", "META['N'], BLOCK=")
    with pytest.raises(NotApplicable, match=r"names bound nowhere in the host code \(META\)"):
        _apply(broken)


WRAPPED = """import torch
import triton
import triton.language as tl


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + (rm[:, None] * s_am + rk[None, :] * s_ak)
    b_ptrs = b_ptr + (rk[:, None] * s_bk + rn[None, :] * s_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + s_cm * cm[:, None] + s_cn * cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(cm[:, None] < M) & (cn[None, :] < N))


def forward(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    mm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
             BM=64, BN=64, BK=32)
    return c
"""


def test_wrapped_indices_and_pointer_variables_are_hinted() -> None:
    """The tutorial form: ``(pid * B + arange) % n`` indices and products inside ``a_ptrs = ...`` definitions."""
    src = _apply(WRAPPED)
    assert "rn = tl.max_contiguous(tl.multiple_of((pid_n * BN + tl.arange(0, BN)) % N, ALIGN), ALIGN)" in src
    assert "tl.multiple_of(rk[:, None] * s_bk, [ALIGN, ALIGN])" in src  # inside b_ptrs' definition
    assert "tl.multiple_of(s_cm * cm[:, None], [ALIGN, ALIGN])" in src
    # the wrap's modulus joins ALIGN's sizes: the hint is true only when ALIGN divides N and M
    assert "ALIGN=_ladder_align(M, N," in src
    ns: dict = {}
    exec(src.split("@triton.jit")[0].split("import triton.language as tl")[1], ns)  # noqa: S102 - the helper alone
    assert ns["_ladder_align"](3000, 5000, 4096, 8, 5000, 8, 5000, 8, 32, 64) == 8


def test_wrapped_matmul_validates_in_the_interpreter(tmp_path: Path) -> None:
    """ALIGN=8 (48x40), ALIGN=1 (33x...): the hinted kernel computes the same product, wrap-around lanes included."""
    import os
    import subprocess
    import sys

    (tmp_path / "mm_hinted.py").write_text(_apply(WRAPPED))
    check = (
        "import torch, mm_hinted\n"
        "for M, N, K in ((48, 40, 72), (33, 64, 32), (100, 136, 40)):\n"
        "    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)\n"
        "    torch.testing.assert_close(mm_hinted.forward(a, b).float(), a.float() @ b.float(), rtol=1e-2, atol=2e-2)\n"
        "print('ok')\n")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def _mm_ptx(src: str, tmp_path: Path, name: str, N: int, align: int | None) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"mm_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = mod.mm
    ints = {"M": 3000, "N": N, "K": 4096, "s_am": 4096, "s_ak": 1, "s_bk": N, "s_bn": 1, "s_cm": N, "s_cn": 1}
    consts = {"BM": 128, "BN": 128, "BK": 64} | ({"ALIGN": align} if align else {})
    sig, attrs = {}, {}
    for i, arg in enumerate(fn.arg_names):
        if arg in consts:
            sig[arg] = "constexpr"
        elif arg.endswith("_ptr"):
            sig[arg], attrs[(i,)] = "*fp16", [["tt.divisibility", 16]]
        elif ints[arg] == 1:
            sig[arg], consts[arg] = "constexpr", 1
        else:
            sig[arg] = "i32"
            if ints[arg] % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
    k = triton.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                       options={"num_warps": 4, "num_stages": 3})
    return k.asm["ptx"]


@pytest.mark.slow
def test_n5000_wrapped_matmul_gets_vector_loads_and_stores(tmp_path: Path) -> None:
    """N=5000 (8 | N, 16 does not): the base loads B and stores C 2 bytes at a time; the hinted kernel compiles to
    the cp.async pipeline and 16-byte stores of the aligned N=4096 compile."""
    pytest.importorskip("triton.backends.nvidia")
    base = _mm_ptx(WRAPPED, tmp_path, "base", 5000, None)
    new = _mm_ptx(_apply(WRAPPED), tmp_path, "new", 5000, 8)
    aligned = _mm_ptx(WRAPPED, tmp_path, "aligned", 4096, None)
    assert "ld.global.b16" in base and "st.global.b16" in base
    assert "ld.global.b16" not in new and "st.global.b16" not in new and "st.global.v4.b32" in new
    assert count_async_copies(new)[0] == count_async_copies(aligned)[0] > count_async_copies(base)[0]
