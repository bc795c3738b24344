"""Facts of the host code that launches the kernels: per-call host setup, launches inside Python loops, buffers
that make a DRAM round trip between two launches, inputs passed to several kernels, and the grid a launch names.

On the same libcst tree as the kernel facts; L1's launcher findings and the host-side transforms
(``rewrite.host_setup``, ``rewrite.launch_loop``, ``rewrite.kernel_chain``) read these definitions.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.kernel.flow import is_allocation, names, pointer_bases
from optimizer.kernel.model import KernelFacts
from optimizer.rewrite.tree import CstLaunch, Tree, arg_value, call_name, walk

__all__ = ["HOST_SETUP_CALLS", "host_setup_lines", "intermediate_roundtrips", "launch_in_loop", "pointer_params",
           "resolved_grid", "setup_call", "shared_tensor_args"]

#: per-call host setup: compiling a kernel, reading its handles, querying the device (``optimizer.rewrite.host_setup``)
HOST_SETUP_CALLS = ("warmup", "_init_handles", "get_device_properties", "triton.compile")


def setup_call(node: cst.CSTNode) -> str | None:
    """The setup name a call performs (``warmup``, ``get_device_properties`` ...), or None."""
    if not isinstance(node, cst.Call):
        return None
    name = call_name(node) or ""
    if name == "triton.compile":
        return name
    if isinstance(node.func, cst.Attribute) and node.func.attr.value in HOST_SETUP_CALLS:
        return node.func.attr.value
    return None


def _launchers(t: Tree) -> list[cst.FunctionDef]:
    return list({id(s.function): s.function for s in t.launches if s.function is not None}.values())


def host_setup_lines(t: Tree) -> list[int]:
    """Lines of launcher functions (those that launch a kernel) that run host setup on every call: a setup call
    (``HOST_SETUP_CALLS``) directly, or a call to a module-level plain function that makes one."""
    helpers = {s.name.value: s for s in t.module.body if isinstance(s, cst.FunctionDef) and not s.decorators}
    setup_helpers = {name for name, f in helpers.items() if any(setup_call(n) for n in walk(f))}
    lines: set[int] = set()
    for func in _launchers(t):
        for n in walk(func):
            if setup_call(n) or (isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                                 and n.func.value in setup_helpers):
                lines.add(t.lines(n)[0])
    return sorted(lines)


def launch_in_loop(t: Tree) -> list[int]:
    """Lines of launch sites inside a Python loop of the launcher (one launch per iteration)."""
    out = []
    for site in t.launches:
        if site.function is None:
            continue
        for n in walk(site.function):
            if isinstance(n, (cst.For, cst.While)) and any(c is site.call for c in walk(n)):
                out.append(t.lines(site.call)[0])
                break
    return out


def resolved_grid(t: Tree, site: CstLaunch, *, unique: bool = False) -> cst.BaseExpression:
    """The launch's grid; a host variable is read through the last assignment of it in the launcher above the
    launch (any, when none is above). ``unique``: only through the one assignment of it (what a transform can
    edit; two definitions leave the name)."""
    grid = site.grid
    if not isinstance(grid, cst.Name):
        return grid
    defs = t.assignments(site.function, grid.value)
    if unique:
        return defs[0].value if len(defs) == 1 else grid
    if not defs:
        return grid
    line = t.lines(site.call)[0]
    return ([d for d in defs if t.lines(d)[0] <= line] or defs)[-1].value


def _inputs(fn: cst.FunctionDef) -> set[str]:
    return {p.name.value for p in (*fn.params.posonly_params, *fn.params.params)}


def shared_tensor_args(t: Tree, kernels: set[str] | None = None) -> int:
    """The most distinct kernels that one launcher input (a plain name passed by position) is passed to (among the
    launches of ``kernels`` when given: the kernels a run launched)."""
    seen: dict[str, set[str]] = {}
    for site in t.launches:
        if kernels is not None and site.kernel not in kernels:
            continue
        inputs = _inputs(site.function) if site.function is not None else set()
        for a in site.call.args:
            if a.keyword is None and not a.star and isinstance(a.value, cst.Name) and a.value.value in inputs:
                seen.setdefault(a.value.value, set()).add(site.kernel)
    return max((len(v) for v in seen.values()), default=0)


def pointer_params(f: KernelFacts, op: str) -> set[str]:
    """Parameters an address of ``op`` (``tl.load`` / ``tl.store``) is based on (``flow.pointer_bases``)."""
    return {b for a in f.accesses if a.op == op
            for b in pointer_bases(f.parsed, arg_value(a.node, "pointer", 0))}


def intermediate_roundtrips(t: Tree, kernels: dict[str, KernelFacts]) -> list[dict[str, Any]]:
    """Buffers the launcher allocates (``flow.is_allocation``), one kernel stores into and a later kernel loads
    from, that the launcher does not return: the data makes a round trip through DRAM between two launches (a
    fusion would keep it in registers)."""
    out: list[dict[str, Any]] = []
    by_fn: dict[int, list[CstLaunch]] = {}
    for site in t.launches:
        if site.function is not None:
            by_fn.setdefault(id(site.function), []).append(site)
    for fsites in by_fn.values():
        fn = fsites[0].function
        assert fn is not None
        fresh = {tg for n in walk(fn) if isinstance(n, cst.Assign) and is_allocation(n.value)
                 for t_ in n.targets for tg in names(t_.target)}
        returned = {x for n in walk(fn) if isinstance(n, cst.Return) and n.value is not None for x in names(n.value)}
        for buf in sorted(fresh - returned):
            writer = reader = None
            params: dict[str, str] = {}
            for site in fsites:  # source order
                k = t.kernels[site.kernel]
                passed = {p for p in k.params if isinstance(a := site.arg_for(k, p), cst.Name) and a.value == buf}
                if writer is None and (w := passed & pointer_params(kernels[site.kernel], "tl.store")):
                    writer, params["writer"] = site, sorted(w)[0]
                elif writer is not None and (r := passed & pointer_params(kernels[site.kernel], "tl.load")):
                    reader, params["reader"] = site, sorted(r)[0]
                    break
            if writer is not None and reader is not None:
                out.append({"buffer": buf, "written_by": writer.kernel, "read_by": reader.kernel,
                            "lines": [t.lines(writer.call)[0], t.lines(reader.call)[0]], "params": params})
    return out
