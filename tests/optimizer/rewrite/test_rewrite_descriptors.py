"""Tensor descriptors for dot kernels (``dot_tensor_descriptor``, and the descriptor variant of ``dot_tile_search``).

The Triton 3.9 interpreter (and 3.6's) executes ``tl.make_tensor_descriptor`` / ``desc.load`` / ``desc.store``, so
the rewritten kernels are compared with the originals there: on 16-byte aligned shapes with the pointer fallback
poisoned (so the descriptor path is what ran), and on the kernels' own unaligned shapes (``USE_TMA`` is then False
at the launch). The interpreter checks neither TMA alignment nor the sm_90 lowering, so the descriptor kernels are
also compiled for ``cuda:90`` and their PTX must hold ``cp.async.bulk.tensor``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rewrite_support import KERNELS, same_outputs

from optimizer.harness.triton_env import find_triton_python
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe, apply_recipe_variants

ROOT = Path(__file__).resolve().parents[3]

RECIPE = {"kind": "dot_tensor_descriptor", "params": {}}

# kernel -> (16-byte aligned fp32 shapes, expected descriptor lines)
SHAPES = {
    "dot_kloop": ({"m": 40, "n": 48, "k": 64},
                  ["a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], "
                   "block_shape=[BLOCK_M, BLOCK_K])",
                   "a = a_desc.load([pid_m * BLOCK_M, k]) if USE_TMA else tl.load(a_ptrs",
                   "b = b_desc.load([k, pid_n * BLOCK_N]) if USE_TMA else"]),
    "dot_bmm_names": ({"b": 2, "m": 40, "n": 36, "k": 52},
                      ["tl.make_tensor_descriptor(a_ptr + bat * M * K, shape=[M, K], strides=[K, 1], "
                       "block_shape=[BM, BK])",
                       "a = a_desc.load([pid_m * BM, k0]) if USE_TMA else"]),
    "dot_linear_relu": ({"m": 70, "n": 40, "k": 48},
                        ["w_desc = tl.make_tensor_descriptor(w_ptr, shape=[N, K], strides=[K, 1], "
                         "block_shape=[BLOCK_N, BLOCK_K])",
                         "w = w_desc.load([pid_n * BLOCK_N, k0]).T if USE_TMA else",
                         "y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], y)"]),
}


def _src(kernel: str) -> str:
    return (KERNELS / f"{kernel}.py").read_text()


def _poisoned(source: str) -> str:
    """The pointer fallback made to fail if it ever runs: what passes then ran the descriptor path."""
    out = source.replace("if USE_TMA else tl.load(", "if USE_TMA else _pointer_path_taken(")
    out = out.replace("    else:\n        tl.store(", "    else:\n        _pointer_path_taken(")
    assert out.count("_pointer_path_taken(") >= 2
    return out


@pytest.mark.parametrize("kernel", sorted(SHAPES))
def test_descriptor_rewrite_matches_on_aligned_and_unaligned_shapes(kernel: str, tmp_path: Path) -> None:
    res = apply_recipe(RECIPE, RecipeContext(source=_src(kernel)))
    aligned, lines = SHAPES[kernel]
    for line in lines:
        assert line in res.source, line
    assert "USE_TMA: tl.constexpr" in res.source and "USE_TMA=_ladder_tma_ok(" in res.source
    assert 'triton.set_allocator(_ladder_tma_scratch)' in res.source
    # aligned: the descriptor path alone (fallback poisoned); the kernel's own CASES are unaligned fp32 strides
    same_outputs(kernel, _poisoned(res.source), tmp_path, atol=1e-4, rtol=1e-4, cases=[aligned])
    same_outputs(kernel, res.source, tmp_path, atol=1e-4, rtol=1e-4)


def test_tile_search_offers_a_descriptor_variant_that_matches(tmp_path: Path) -> None:
    out = apply_recipe_variants({"kind": "dot_tile_search", "params": {}}, RecipeContext(source=_src("dot_kloop")))
    assert len(out) <= 8
    desc = [r for r in out if r.applied["mode"] == "descriptor"]
    assert len(desc) == 1 and desc[0].applied["BLOCK_M"] == 128 and desc[0].applied["BLOCK_N"] == 256
    src = desc[0].source
    assert "BLOCK_M=128, BLOCK_N=256, BLOCK_K=64" in src and "tl.make_tensor_descriptor(" in src
    assert "tensor descriptors" not in out[0].description  # offered, so no refusal recorded
    same_outputs("dot_kloop", _poisoned(src), tmp_path, atol=1e-3, rtol=1e-3, cases=[SHAPES["dot_kloop"][0]])


def test_tile_search_records_why_there_is_no_descriptor_variant() -> None:
    ctx = RecipeContext(source=_src("dot_kloop"), backend="amd")
    out = apply_recipe_variants({"kind": "dot_tile_search", "params": {}}, ctx)
    assert all(r.applied["mode"] != "descriptor" for r in out)
    assert "no tensor-descriptor variant: backend amd" in out[0].description


def _launch(kernel: str, **ints: int) -> dict:
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    return {"kernel": kernel, "signature": sig,
            "constexprs": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, "ir_args": dict(ints),
            "divisible_by_16": ["a_ptr", "b_ptr", "c_ptr"]}


@pytest.mark.parametrize(("source", "ctx", "reason"), [
    (_src("elem_scale"), {}, "no tl.dot"),
    (_src("dot_bmm"), {}, "does not bound both axes"),
    (_src("dot_kloop"), {"backend": "ascend"}, "generated for cuda only"),
    (_src("dot_kloop").replace("other=0.0)\n        b =", "other=1.0)\n        b ="), {}, "fills with 1.0"),
    (_src("dot_kloop").replace("rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
                               "rm = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M"), {}, "is not start \\+ tl.arange"),
    (_src("dot_kloop").replace("a_ptr + rm[:, None] * K + rk[None, :]", "a_ptr + rm[:, None] * K + rk[None, :] * M"),
     {}, "no single stride-1 axis"),
    (_src("dot_kloop").replace("BLOCK_K=16)", "BLOCK_K=8)"), {}, "at least 16 bytes"),
    (_src("dot_kloop"), {"launches": [_launch("mm_kernel", M=40, N=48, K=70)]},
     "stride K = 70 x 4 B = 280 B, not a multiple of 16"),
])
def test_refusals_state_the_reason(source: str, ctx: dict, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=source, **ctx))


def test_an_aligned_recorded_launch_is_accepted() -> None:
    ctx = RecipeContext(source=_src("dot_kloop"), launches=[_launch("mm_kernel", M=40, N=48, K=64)])
    res = apply_recipe(RECIPE, ctx)
    assert "tensor descriptors" in res.description


_COMPILE = r'''
import importlib.util, json, sys
import torch, triton
from optimizer.harness.compile_only import CompileRecorder
a = json.loads(sys.argv[1])
spec = importlib.util.spec_from_file_location("cand", a["path"])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
ptx = []
real = triton.compile
def keep(*args, **kw):
    k = real(*args, **kw); ptx.append(k.asm.get("ptx", "")); return k
triton.compile = keep
rec = CompileRecorder().install()
rec.current = []
inputs = mod.get_inputs(**a["case"])
mod.ModelNew()(*[x.to("meta") for x in inputs])
print(json.dumps({"ok": [r["ok"] for r in rec.current], "msg": [r["message"] for r in rec.current],
                  "tma": ["cp.async.bulk.tensor" in p for p in ptx]}))
'''


def _compile(kernel: str, source: str, tmp_path: Path, python: str) -> dict:
    path = tmp_path / f"{kernel}_desc.py"
    path.write_text(source)
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(ROOT)}  # never the other env's site-packages
    res = subprocess.run([python, "-c", _COMPILE, json.dumps({"path": str(path), "case": SHAPES[kernel][0]})],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


PY36 = find_triton_python("3.6")  # $LADDER_TRITON_PYTHON or .venv-triton36 (make triton36-env)
PYTHONS = [pytest.param(sys.executable, id="installed")] + ([pytest.param(str(PY36), id="triton36")] if PY36 else [])


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("kernel", ["dot_kloop", "dot_linear_relu"])
def test_descriptor_kernels_compile_to_tma_for_sm90(kernel: str, python: str, tmp_path: Path) -> None:
    res = apply_recipe(RECIPE, RecipeContext(source=_src(kernel)))
    src = res.source.replace("allow_tf32=False", "allow_tf32=True")  # the ieee FMA dot does not change the loads
    got = _compile(kernel, src, tmp_path, python)
    assert got["ok"] == [True], got["msg"]
    assert got["tma"] == [True]


def test_stride_arguments_count_as_unit_only_where_the_recorded_launches_pass_one(tmp_path: Path) -> None:
    src = _src("dot_stride_args")
    with pytest.raises(NotApplicable, match="counts as 1 only where every recorded launch passes 1"):
        apply_recipe(RECIPE, RecipeContext(source=src))
    ints = {"M": 40, "N": 48, "K": 64, "stride_am": 64, "stride_ak": 1, "stride_bk": 48, "stride_bn": 1,
            "stride_cm": 48, "stride_cn": 1}
    rec = {**_launch("mm_kernel"), "ir_args": ints}
    res = apply_recipe(RECIPE, RecipeContext(source=src, launches=[rec]))
    assert "strides=[stride_am, 1]" in res.source and "a_desc.load([pid_m * BLOCK_M, k0])" in res.source
    assert "and a.stride(1) == 1 and b.stride(1) == 1 and c.stride(1) == 1" in res.source  # re-checked per call
    same_outputs("dot_stride_args", _poisoned(res.source), tmp_path, atol=1e-4, rtol=1e-4,
                 cases=[{"m": 40, "n": 48, "k": 64}])
    same_outputs("dot_stride_args", res.source, tmp_path, atol=1e-4, rtol=1e-4)  # a transposed b takes the pointer path
