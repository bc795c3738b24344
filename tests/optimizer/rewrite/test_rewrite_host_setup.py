"""host_setup_cache: per-call host setup in the launcher (kernel warmup, device queries) memoized per launch signature.

Each rewrite runs against the original in the interpreter (``TRITON_INTERPRET=1``, a fresh module per load): the same
outputs on every case, the helper run once per distinct shape instead of once per call, and an output allocated by the
helper never shared between calls.
"""

from __future__ import annotations

import pytest
import torch
from rewrite_support import KERNELS, load

from optimizer.recipes.appliers import NotApplicable, RecipeContext, apply_recipe

RECIPE = {"kind": "host_setup_cache", "params": {}}


def _rewrite(name: str, tmp_path):
    res = apply_recipe(RECIPE, RecipeContext(source=(KERNELS / f"{name}.py").read_text()))
    path = tmp_path / f"{name}_cached.py"
    path.write_text(res.source)
    return res, load(KERNELS / f"{name}.py"), load(path)


@pytest.mark.parametrize("name", ["host_setup_occupancy", "host_setup_config", "host_setup_alloc"])
def test_memoized_setup_gives_the_same_results(name: str, tmp_path) -> None:
    res, old, new = _rewrite(name, tmp_path)
    assert "_host_setup_cached(" in res.source and res.description.startswith("per-call host setup memoized")
    for case in old.CASES:
        torch.manual_seed(0)
        inputs = old.get_inputs(**case)
        torch.testing.assert_close(new.ModelNew()(*inputs), old.ModelNew()(*inputs))


@pytest.mark.parametrize("name", ["host_setup_occupancy", "host_setup_config"])
def test_the_helper_runs_once_per_launch_signature(name: str, tmp_path) -> None:
    _res, old, new = _rewrite(name, tmp_path)
    a, b = old.get_inputs(**old.CASES[0]), old.get_inputs(**old.CASES[1])
    for mod in (old, new):
        for xs in (a, a, a, b, b):
            mod.ModelNew()(*xs)
    assert len(old.CALLS) == 5 and len(new.CALLS) == 2  # once per shape, not once per call


def test_an_output_the_helper_allocates_is_never_shared(tmp_path) -> None:
    _res, _old, new = _rewrite("host_setup_alloc", tmp_path)
    x, y = new.get_inputs(N=3000)
    first, second = new.ModelNew()(x, y), new.ModelNew()(x, y)
    assert first.data_ptr() != second.data_ptr() and not new._HOST_SETUP_CACHE  # the tuple holds a tensor: not cached


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


def test_already_memoized_is_refused(tmp_path) -> None:
    res, _old, _new = _rewrite("host_setup_occupancy", tmp_path)
    with pytest.raises(NotApplicable, match="already memoized"):
        apply_recipe(RECIPE, RecipeContext(source=res.source))
