"""``host_setup_cache``: host setup the launcher repeats on every call (a kernel warmup, device queries) ->
once per shape.

Card ``cache-host-launch-setup``. A launcher that compiles or queries before it launches pays that work on every
forward. The Triton tutorial's persistent softmax is the model case: to size its grid by occupancy it calls
``softmax_kernel.warmup(...)``, ``kernel._init_handles()`` and ``driver.active.utils.get_device_properties`` on every
call, ~0.9 ms of host time per forward on the H200 around a 0.29 ms kernel, so the GPU idles between launches::

    num_programs = _num_programs(y, x, n_rows, n_cols, BLOCK_SIZE, num_stages, num_warps)
->
    num_programs = _host_setup_cached("_num_programs@72", _num_programs, y, x, n_rows, n_cols, BLOCK_SIZE, ...)

``_host_setup_cached`` (added once to the module) memoizes the call on everything such setup can depend on: each
tensor argument's shape, strides, dtype, device and 16-byte alignment (what Triton specializes on), and every other
argument's value; unhashable arguments bypass the cache. The kernel and its launch are unchanged.

What is memoized (each refused with its reason otherwise):

- a call, in a function that launches a kernel, to a module-level helper whose body performs setup (``.warmup(``,
  ``._init_handles(``, ``get_device_properties(``, ``triton.compile(``), or a setup call itself whose result is
  assigned to a name;
- a helper only when its result cannot depend on tensor values or change them: no value reads (``.item()``,
  ``.tolist()``, ``.cpu()``, ``.numpy()``, reductions such as ``.max()`` / ``torch.sum``), no in-place method
  (``x.add_(...)``), no subscript or attribute assignment, no ``global`` / ``nonlocal``. A result holding a tensor
  is never cached (checked at run time), so an output allocated by the helper is never shared between calls.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.launcher import HOST_SETUP_CALLS, setup_call
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import call_name, walk

__all__ = ["HostSetupCache"]
#: calls whose result depends on tensor values (a memoized helper must not make them: its result would go stale)
_READS = ("item", "tolist", "cpu", "numpy", "max", "min", "sum", "any", "all", "nonzero", "unique", "argmax", "argmin",
          "mean", "count_nonzero", "bincount", "where")
HELPER = "_host_setup_cached"

_HELPER_SRC = f'''
_HOST_SETUP_CACHE: dict = {{}}


def {HELPER}(site, fn, *args, **kwargs):
    """Per-call host setup (kernel warmup, device queries) memoized on what it can depend on: each tensor's shape,
    strides, dtype, device and 16-byte alignment, and the other arguments' values (unhashable ones bypass the cache)."""
    import collections.abc

    def part(a):
        if hasattr(a, "data_ptr") and hasattr(a, "stride"):
            return ("tensor", tuple(a.shape), tuple(a.stride()), str(a.dtype), str(a.device), a.data_ptr() % 16)
        return a

    def hashable(v):
        return all(hashable(x) for x in v) if isinstance(v, tuple) else isinstance(v, collections.abc.Hashable)

    key = (site, tuple(part(a) for a in args), tuple(sorted((k, part(v)) for k, v in kwargs.items())))
    if not hashable(key):
        return fn(*args, **kwargs)
    if key not in _HOST_SETUP_CACHE:
        out = fn(*args, **kwargs)
        items = out if isinstance(out, (tuple, list)) else out.values() if isinstance(out, dict) else (out,)
        if any(hasattr(x, "data_ptr") for x in items):
            return out  # a tensor is never reused across calls
        _HOST_SETUP_CACHE[key] = out
    return _HOST_SETUP_CACHE[key]
'''


def _helpers(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """Module-level plain (undecorated) functions."""
    return {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef) and not s.decorators}


def _helper_reasons(fn: cst.FunctionDef) -> list[str]:
    """Why memoizing ``fn`` could change results (empty: it reads shapes, queries and compiles only). A returned
    tensor is caught at run time: ``_host_setup_cached`` never caches one."""
    out: list[str] = []
    for n in walk(fn.body):
        if isinstance(n, (cst.Global, cst.Nonlocal)):
            out.append(f"{fn.name.value} declares global/nonlocal state")
        elif isinstance(n, cst.Call):
            name = call_name(n) or ""
            attr = n.func.attr.value if isinstance(n.func, cst.Attribute) else name
            if attr in _READS and (name.startswith("torch.") or isinstance(n.func, cst.Attribute)):
                out.append(f"{fn.name.value} reads tensor values ({name or attr}()): its result depends on the data")
            elif isinstance(n.func, cst.Attribute) and attr.endswith("_") and not attr.startswith("_"):
                out.append(f"{fn.name.value} changes a tensor in place (.{attr}())")
        elif isinstance(n, (cst.Assign, cst.AugAssign)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(isinstance(t, (cst.Subscript, cst.Attribute)) for t in targets):
                out.append(f"{fn.name.value} assigns into a subscript or attribute")
    return list(dict.fromkeys(out))


def _sites(t: Target) -> tuple[list[tuple[cst.Call, str]], list[str]]:
    """(calls to memoize with their site label, reasons a setup call was left alone)."""
    helpers = _helpers(t.tree.module)
    funcs = list(dict.fromkeys(s.function for s in t.sites if s.function is not None))
    found: list[tuple[cst.Call, str]] = []
    refused: list[str] = []
    seen: dict[str, int] = {}

    def label(name: str) -> str:  # a stable per-site cache key: the callee and its occurrence in the launcher
        seen[name] = seen.get(name, 0) + 1
        return f"{name}#{seen[name]}"

    for func in funcs:
        assigned = {id(n.value) for n in walk(func.body) if isinstance(n, cst.Assign)}
        for n in walk(func.body):
            if not isinstance(n, cst.Call):
                continue
            name = call_name(n) or ""
            if name in helpers and any(setup_call(m) for m in walk(helpers[name].body)):
                why = _helper_reasons(helpers[name])
                if why:
                    refused += why
                else:
                    found.append((n, label(f"{func.name.value}:{name}")))
            elif (what := setup_call(n)) and what != "_init_handles":
                if id(n) in assigned:
                    found.append((n, label(f"{func.name.value}:{t.tree.code(n.func)}")))
                else:
                    refused.append(f"the {t.tree.code(n.func)} call in {func.name.value} is not assigned to a name")
    return found, refused


class HostSetupCache:
    """Per-call host setup in the launcher (kernel warmup, device queries) memoized per shape and dtype."""

    kind = "host_setup_cache"
    card = "cache-host-launch-setup"

    def preconditions(self, target: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        if HELPER in target.tree.source:
            return [f"the launcher's setup is already memoized ({HELPER})"]
        found, refused = _sites(target)
        if found:
            return []
        return refused or [f"no call in the launcher of {target.kernel.name} performs per-call host setup "
                           f"({', '.join(HOST_SETUP_CALLS)}), directly or through a module-level helper"]

    def points(self, target: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{}]

    def rewrite(self, target: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        tree = target.tree
        found, _ = _sites(target)
        for call, site in found:
            def memoized(c: cst.CSTNode, site: str = site) -> cst.CSTNode:
                assert isinstance(c, cst.Call)  # the edited setup call
                return c.with_changes(func=cst.Name(HELPER),
                                      args=[cst.Arg(cst.SimpleString(repr(site))), cst.Arg(c.func), *c.args])
            tree.edit(call, memoized)
        first = next(s for s in tree.module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef)))
        tree.insert_before(first, "\n\n" + _HELPER_SRC.strip("\n") + "\n")
        return (f"per-call host setup memoized per shape/dtype/alignment: {', '.join(s for _, s in found)} "
                f"now run once per distinct launch signature ({HELPER})")
