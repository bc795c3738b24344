"""privatized_histogram: counting atomics at a loaded index -> tl.histogram per program + one atomic per bin.

The interpreter checks run in a fresh process (``rewrite_support.same_outputs``); the bincount is also compiled
for ``cuda:90`` (no GPU needed) with the installed Triton and, where present, the Triton 3.6 environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rewrite_support import KERNELS, rewrite, same_outputs

from optimizer.harness.triton_env import find_triton_python
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.recipe import apply_recipe

ROOT = Path(__file__).resolve().parents[3]
RECIPE = {"kind": "privatized_histogram", "params": {}}
ATOMIC = "tl.atomic_add(counts_ptr + lab, tl.full((BLOCK,), 1, tl.int32), mask=mask)"


@pytest.mark.parametrize(("kernel", "name"), [
    ("hist_bincount", "bincount_kernel"), ("hist_float_counts", "token_count"),
    ("hist_rows_tile", "expert_counts_kernel")])
def test_counts_become_per_program_histograms(kernel: str, name: str, tmp_path: Path) -> None:
    res = rewrite(kernel, RECIPE)
    assert "tl.histogram(" in res.source and "PRIV_BINS: tl.constexpr" in res.source
    assert res.description.startswith(f"{name}: ")
    assert "if PRIV_BINS > 0:" in res.source and "<= 1024 else 0" in res.source
    same_outputs(kernel, res.source, tmp_path, atol=0, rtol=0)  # every CASE, C=2000 (over the cap) included


def test_two_dimensional_index_is_flattened_and_atomic_options_kept() -> None:
    res = rewrite("hist_rows_tile", RECIPE)
    assert "tl.histogram(tl.ravel(expert.to(tl.int32)), PRIV_BINS, mask=tl.ravel(valid & (expert >= 0)" in res.source
    assert "mask=(bins < n_bins) & (hist > 0), sem=\"relaxed\")" in res.source


def test_each_branch_is_the_one_that_runs(tmp_path: Path) -> None:
    """Below the cap the histogram branch alone counts; above it (C=2000 > 1024 bins) the original atomics do."""
    res = rewrite("hist_bincount", RECIPE)
    no_else = res.source.replace(f"    else:\n        {ATOMIC}", "    else:\n        pass")
    assert no_else != res.source
    same_outputs("hist_bincount", no_else, tmp_path, atol=0, rtol=0, cases=[{"n": 5000, "c": 16}, {"n": 77, "c": 5}])
    no_hist = res.source.replace("mask=(bins < n_bins) & (hist > 0)", "mask=bins < 0")
    assert no_hist != res.source
    same_outputs("hist_bincount", no_hist, tmp_path, atol=0, rtol=0, cases=[{"n": 3001, "c": 2000}])


def test_the_cap_is_a_point_parameter(tmp_path: Path) -> None:
    res = apply_recipe({"kind": "privatized_histogram", "params": {"max_bins": 8}},
                       RecipeContext(source=(KERNELS / "hist_bincount.py").read_text()))
    assert "if counts.numel() <= 8 else 0" in res.source and res.applied == {"max_bins": 8}
    same_outputs("hist_bincount", res.source, tmp_path, atol=0, rtol=0, cases=[{"n": 5000, "c": 16}, {"n": 77, "c": 5}])


def _src(kernel: str = "hist_bincount") -> str:
    return (KERNELS / f"{kernel}.py").read_text()


@pytest.mark.parametrize(("source", "reason"), [
    (_src().replace(ATOMIC, "tl.atomic_add(counts_ptr + lab, lab.to(tl.int32), mask=mask)"),
     "weighted histogram: the added value is not the constant 1"),
    (_src().replace(ATOMIC, "tl.atomic_add(counts_ptr + offs, tl.full((BLOCK,), 1, tl.int32), mask=mask)"),
     "index offs is not loaded data"),
    (_src().replace(ATOMIC, "tl.atomic_max(counts_ptr + lab, tl.full((BLOCK,), 1, tl.int32), mask=mask)"),
     "tl.atomic_max is not a count"),
    (_src().replace(ATOMIC, f"for _r in range(2):\n        {ATOMIC}"), "is not a top-level statement"),
    (_src().replace(ATOMIC, f"old = {ATOMIC}"), "is not a top-level statement"),
    (_src().replace(ATOMIC, f"{ATOMIC}\n    {ATOMIC}"), "2 atomics in the kernel"),
    (_src().replace("lab = tl.load(labels_ptr + offs, mask=mask, other=0)",
                    "lab = tl.load(labels_ptr + tl.program_id(0))"), "is a scalar"),
    (_src().replace("](labels, counts, n,", "](labels, torch.zeros(C, dtype=torch.int32), n,"),
     "does not pass a named tensor for counts_ptr"),
])
def test_refusals(source: str, reason: str) -> None:
    with pytest.raises(NotApplicable, match=reason):
        apply_recipe(RECIPE, RecipeContext(source=source))


def test_the_card_recipe_applies_inside_its_domain() -> None:
    import yaml

    from kb.models.cards import parse_card

    card = parse_card(yaml.safe_load((ROOT / "kb/cards/patterns/privatized-histogram.yaml").read_text()))
    res = apply_recipe(card.rewrite.recipe, RecipeContext(source=_src()))
    assert "tl.histogram(" in res.source
    with pytest.raises(NotApplicable, match="requires code:scatter_atomic"):  # a full-sum atomic is two_stage's
        apply_recipe(card.rewrite.recipe, RecipeContext(source=_src("atomic_sum")))


_COMPILE = r'''
import importlib.util, json, sys
import torch, triton
from optimizer.harness.compile_only import CompileRecorder
a = json.loads(sys.argv[1])
spec = importlib.util.spec_from_file_location("cand", a["path"])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
rec = CompileRecorder().install()
out = []
for n, c, dtype in a["cases"]:
    rec.current = []
    mod.ModelNew()(torch.empty(n, dtype=getattr(torch, dtype), device="meta"), c)
    out += [{"c": c, "ok": r["ok"], "msg": r["message"], "bins": r["constexprs"].get("PRIV_BINS")} for r in rec.current]
print(json.dumps(out))
'''

PY36 = find_triton_python("3.6")
PYTHONS = [pytest.param(sys.executable, id="installed")] + ([pytest.param(str(PY36), id="triton36")] if PY36 else [])


@pytest.mark.parametrize("python", PYTHONS)
def test_bincount_compiles_for_sm90(python: str, tmp_path: Path) -> None:
    """tl.histogram with a mask on int64 labels (cast to int32) lowers for cuda:90 from 1 to 1024 bins; C=2000
    compiles the original path (PRIV_BINS=0)."""
    path = tmp_path / "hist_bincount_priv.py"
    path.write_text(rewrite("hist_bincount", RECIPE).source)
    cases = [[1 << 20, 16, "int64"], [1 << 20, 5, "int32"], [1 << 20, 1000, "int64"], [1 << 20, 2000, "int64"],
             [1000, 1, "int64"]]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(ROOT)}
    res = subprocess.run([python, "-c", _COMPILE, json.dumps({"path": str(path), "cases": cases})],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert [r["ok"] for r in got] == [True] * 5, [r["msg"] for r in got]
    assert [r["bins"] for r in got] == [16, 8, 1024, 0, 1]
