"""inplace_output: a cloned input written in place -> a fresh output, and a buffer copied back -> in place.

Each rewrite is run against the original in the interpreter (a fresh process, ``TRITON_INTERPRET=1``), comparing
the returned values *and* every input after the call (the in-place direction's result is the mutated input).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rewrite_support import KERNELS

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

RECIPE = {"kind": "inplace_output", "params": {}}

_COMPARE = r'''
import importlib.util, json, sys
import torch
a = json.loads(sys.argv[1])
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
old, new = load(a["old"], "old_k"), load(a["new"], "new_k")
for case in a["cases"] or getattr(old, "CASES", [{}]):
    torch.manual_seed(0)
    inputs = old.get_inputs(**case)
    ins_old, ins_new = [x.clone() for x in inputs], [x.clone() for x in inputs]
    want, got = old.ModelNew()(*ins_old), new.ModelNew()(*ins_new)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got, strict=True):
        if w is None:
            assert g is None
        else:
            torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
    for i, (w, g) in enumerate(zip(ins_old, ins_new, strict=True)):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5, msg=lambda m, i=i: f"input {i} after the call: {m}")
print("ok")
'''


def _same(kernel: str, new_source: str, tmp_path: Path, cases: list[dict] | None = None) -> None:
    path = tmp_path / f"{kernel}_rewritten.py"
    path.write_text(new_source)
    args = json.dumps({"old": str(KERNELS / f"{kernel}.py"), "new": str(path), "cases": cases})
    res = subprocess.run([sys.executable, "-c", _COMPARE, args], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TRITON_INTERPRET": "1"}, check=False)
    assert res.returncode == 0 and "ok" in res.stdout, (res.stdout + res.stderr)[-4000:]


def _src(kernel: str) -> str:
    return (KERNELS / f"{kernel}.py").read_text()


@pytest.mark.parametrize(("kernel", "lines"), [
    ("inplace_relu_clone", ["y = torch.empty_like(x, memory_format=torch.contiguous_format)",
                            "(x.contiguous(), n, 0.1, BLOCK=256, y_ptr_out=y)", "tl.store(y_ptr_out + offs,"]),
    ("inplace_axpy_clone", ["out = torch.empty_like(y, memory_format=torch.contiguous_format)",
                            "(x, y.contiguous(), 2.5, out.numel(), BLOCK_SIZE=BLOCK_SIZE, out_ptr_out=out)",
                            "tl.store(out_ptr_out + offsets, a * x + acc"]),
    ("inplace_softmax_clone", ["(x.contiguous(), y.stride(0), C, BLOCK=triton.next_power_of_2(C), y_ptr_out=y)",
                               "tl.store(y_ptr_out + row * row_stride + cols,"]),
])
def test_clone_written_in_place_becomes_a_fresh_output(kernel: str, lines: list[str], tmp_path: Path) -> None:
    res = apply_recipe(RECIPE, RecipeContext(source=_src(kernel)))
    assert res.applied == {"mode": "fresh"} and ".clone()" not in res.source.split("class ModelNew")[1]
    for line in lines:
        assert line in res.source, line
    _same(kernel, res.source, tmp_path)


def test_fresh_output_of_a_non_contiguous_input_still_matches(tmp_path: Path) -> None:
    src = _src("inplace_relu_clone").replace("return [torch.randn(*shape)]", "return [torch.randn(*shape).t()]")
    (tmp_path / "k").mkdir()
    old = tmp_path / "k" / "inplace_relu_t.py"
    old.write_text(src)
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    new = tmp_path / "new.py"
    new.write_text(res.source)
    args = json.dumps({"old": str(old), "new": str(new), "cases": [{"shape": (33, 70)}]})
    out = subprocess.run([sys.executable, "-c", _COMPARE, args], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TRITON_INTERPRET": "1"}, check=False)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.parametrize(("kernel", "lines", "gone"), [
    ("inplace_relu_copyback", ["relu_kernel[(triton.cdiv(n, 512),)](x, x, n, BLOCK=512)"],
     ["x.copy_(out)", "empty_like"]),
    ("inplace_rownorm_copyback", ["row_l2_kernel[(R,)](x, x, x.stride(0), C, BLOCK=triton.next_power_of_2(C))"],
     ["x.copy_(out)", "empty_like"]),
])
def test_buffer_copied_back_becomes_in_place(kernel: str, lines: list[str], gone: list[str], tmp_path: Path) -> None:
    res = apply_recipe(RECIPE, RecipeContext(source=_src(kernel)))
    assert res.applied == {"mode": "inplace"}
    for line in lines:
        assert line in res.source, line
    for text in gone:
        assert text not in res.source, text
    _same(kernel, res.source, tmp_path)


def test_one_point_per_base() -> None:
    out = apply_recipe_variants(RECIPE, RecipeContext(source=_src("inplace_relu_clone")))
    assert len(out) == 1
    with pytest.raises(NotApplicable, match="already tried"):
        apply_recipe(RECIPE, RecipeContext(source=_src("inplace_relu_clone"), tried=[out[0].applied]))


RELU = _src("inplace_relu_clone")
COPYBACK = _src("inplace_relu_copyback")


@pytest.mark.parametrize(("source", "reason"), [
    (_src("elem_scale"), "no kernel argument is a name bound to <tensor>.clone()"),
    (RELU.replace("[(triton.cdiv(n, 256),)]", "[(4,)]"), "coverage unproven"),
    # a defaulted BLOCK the launch leaves out: the grid check read the missing argument (AttributeError)
    (RELU.replace("BLOCK: tl.constexpr)", "BLOCK: tl.constexpr = 256)").replace(", BLOCK=256)", ")"),
     "does not pass BLOCK"),
    (RELU.replace("n = y.numel()", "n = y.numel() // 2"), "numel"),
    (RELU.replace("tl.store(y_ptr + offs,", "tl.store(y_ptr + offs + 1,"), "different offsets"),
    (RELU.replace("    v = tl.load(y_ptr + offs, mask=mask, other=0.0)\n",
                  "    v = tl.load(y_ptr + offs, mask=mask, other=0.0)\n    tl.store(y_ptr + offs, v, mask=mask)\n"
                  "    v = tl.load(y_ptr + offs, mask=mask, other=0.0)\n"), "loaded after the first store"),
    (RELU.replace("y = x.clone()\n", "y = x.clone()\n        y.mul_(2)\n"), "used between the clone and the launch"),
    (RELU.replace("(y, n, 0.1, BLOCK=256)", "(y, n, x.stride(0) * 0.1, BLOCK=256)"), "reads x's strides"),
    (_src("inplace_softmax_clone").replace("BLOCK=triton.next_power_of_2(C)", "BLOCK=64"), "next_power_of_2"),
    (COPYBACK.replace("x.copy_(out)\n        return x", "x.copy_(out)\n        return out"),
     "used other than by the launch"),
    (COPYBACK.replace("tl.store(out_ptr + offs,", "tl.store(out_ptr + offs + 1,"), "different offsets"),
])
def test_refusals_state_the_reason(source: str, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=source))


def test_a_loop_over_the_in_place_tensor_is_refused() -> None:
    src = COPYBACK.replace(
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
        "    tl.store(out_ptr + offs, tl.maximum(v, 0.0), mask=offs < n)\n",
        "    for i in range(2):\n"
        "        offs = (tl.program_id(0) * 2 + i) * BLOCK + tl.arange(0, BLOCK)\n"
        "        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
        "        tl.store(out_ptr + offs, tl.maximum(v, 0.0), mask=offs < n)\n")
    assert "for i in range(2)" in src
    with pytest.raises(NotApplicable, match="sits in a loop"):
        apply_recipe(RECIPE, RecipeContext(source=src))
