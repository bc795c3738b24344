"""host_setup_cache: per-call host setup in the launcher (kernel warmup, device queries) memoized per launch signature.

Each rewrite runs against the original in the interpreter (``TRITON_INTERPRET=1``, a fresh process): the same
outputs on every case, the helper run once per distinct shape instead of once per call, and an output allocated by the
helper never shared between calls.
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
from optimizer.rewrite.recipe import apply_recipe

RECIPE = {"kind": "host_setup_cache", "params": {}}

# Run in a fresh interpreter process (TRITON_INTERPRET=1 before triton is imported): in a pytest process where
# triton.language was imported in compiled mode, tl.max / tl.sum cannot run in the interpreter, and setting the
# variable here would leak into later tests.
_CHECK = r'''
import importlib.util, json, sys
import torch
a = json.loads(sys.argv[1])
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
old, new = load(a["old"], "old_k"), load(a["new"], "new_k")
for case in old.CASES:
    torch.manual_seed(0)
    inputs = old.get_inputs(**case)
    torch.testing.assert_close(new.ModelNew()(*inputs), old.ModelNew()(*inputs))
out = {}
if hasattr(old, "CALLS"):
    xa, xb = old.get_inputs(**old.CASES[0]), old.get_inputs(**old.CASES[1])
    old.CALLS.clear(); new.CALLS.clear(); new._HOST_SETUP_CACHE.clear()
    for mod in (old, new):
        for xs in (xa, xa, xa, xb, xb):
            mod.ModelNew()(*xs)
    out["calls"] = [len(old.CALLS), len(new.CALLS)]
else:
    x, y = new.get_inputs(N=3000)
    first, second = new.ModelNew()(x, y), new.ModelNew()(x, y)
    out["distinct"] = first.data_ptr() != second.data_ptr()
    out["cached"] = len(new._HOST_SETUP_CACHE)
print(json.dumps(out))
'''


def _run(name: str, tmp_path: Path) -> tuple[str, dict]:
    res = apply_recipe(RECIPE, RecipeContext(source=(KERNELS / f"{name}.py").read_text()))
    assert "_host_setup_cached(" in res.source and res.description.startswith("per-call host setup memoized")
    path = tmp_path / f"{name}_cached.py"
    path.write_text(res.source)
    args = json.dumps({"old": str(KERNELS / f"{name}.py"), "new": str(path)})
    proc = subprocess.run([sys.executable, "-c", _CHECK, args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_INTERPRET": "1"}, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return res.source, json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["host_setup_occupancy", "host_setup_config"])
def test_same_results_and_the_helper_runs_once_per_launch_signature(name: str, tmp_path: Path) -> None:
    _src, out = _run(name, tmp_path)
    assert out["calls"] == [5, 2]  # original: every call; memoized: once per shape


def test_an_output_the_helper_allocates_is_never_shared(tmp_path: Path) -> None:
    _src, out = _run("host_setup_alloc", tmp_path)
    assert out == {"distinct": True, "cached": 0}  # the tuple holds a tensor: never cached


def test_direct_setup_calls_assigned_in_the_launcher_are_memoized() -> None:
    src = '''
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass


def launch(x):
    props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
    compiled = k.warmup(x, x.numel(), BLOCK=128, grid=(1,))
    k[(props["multiprocessor_count"],)](x, x.numel(), BLOCK=128)
    return compiled
'''
    res = apply_recipe(RECIPE, RecipeContext(source=src))
    assert "_host_setup_cached('launch:triton.runtime.driver.active.utils.get_device_properties#1', " in res.source
    assert "_host_setup_cached('launch:k.warmup#1', k.warmup, x, x.numel(), BLOCK=128, grid=(1,))" in res.source


@pytest.mark.parametrize("body, why", [
    ("    n = int(lens.max().item())\n    kernel = k.warmup(x, n, BLOCK=128, grid=(1,))\n    return n", "reads tensor values"),
    ("    x.zero_()\n    kernel = k.warmup(x, 4, BLOCK=128, grid=(1,))\n    return 4", "changes a tensor in place"),
    ("    return x.shape[0]", "performs per-call host setup"),
])
def test_refused_where_memoizing_could_change_results(body: str, why: str) -> None:
    src = f'''
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass


def _setup(x, lens):
{body}


def launch(x, lens):
    n = _setup(x, lens)
    k[(n,)](x, n, BLOCK=128)
'''
    with pytest.raises(NotApplicable, match=why):
        apply_recipe(RECIPE, RecipeContext(source=src))


def test_already_memoized_is_refused() -> None:
    res = apply_recipe(RECIPE, RecipeContext(source=(KERNELS / "host_setup_occupancy.py").read_text()))
    with pytest.raises(NotApplicable, match="already memoized"):
        apply_recipe(RECIPE, RecipeContext(source=res.source))
