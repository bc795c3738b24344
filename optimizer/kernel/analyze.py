"""Building the kernel facts (``optimizer.kernel.model``) from the libcst tree of a candidate.

Per kernel: the program-id mapping (which variable holds which axis), block ranges (``tl.arange`` and whether
its size is a constexpr), memory accesses (loads, stores, atomics) with pointer and mask text and whether the
address depends on the program id, loops (with the parameter bounding a range loop and its step) and the names
advanced inside them, reductions, dots (input precision, the constexprs that size their tiles), and div/mod on
program-id-derived values. Per launch: the grid expression, the meta-parameters passed, and the buffers the
launching function allocates (``flow.is_allocation``).

The dependence on the program id is ``flow.dependents`` seeded with every ``tl.program_id`` call (``pid =
tl.program_id(0).to(tl.int64)`` as much as ``pid = tl.program_id(0)``); it is conservative in the direction the
transforms need (a value computed from anything that depends on a program id depends on it).
"""

from __future__ import annotations

import libcst as cst

from optimizer.kernel.flow import ATOMICS, REDUCTIONS, assigned, dependents, is_allocation, names
from optimizer.kernel.launcher import resolved_grid
from optimizer.kernel.model import Access, Dot, KernelFacts, LaunchFacts, Loop, ModuleFacts
from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree, arg_value, call_name, range_args, walk

__all__ = ["kernel_facts", "launch_facts", "module_facts"]


def _axis(call: cst.Call) -> int | None:
    v = arg_value(call, "axis", 0)
    return int(v.value) if isinstance(v, cst.Integer) else None


def _inside_loops(k: cst.FunctionDef) -> set[int]:
    ids: set[int] = set()
    for n in walk(k):
        if isinstance(n, (cst.For, cst.While)):
            ids |= {id(m) for m in walk(n.body)}
    return ids


def _range_bound(k: CstKernel, n: cst.CSTNode) -> tuple[str | None, str | int | None]:
    """(bound, step) of ``for _ in range([start,] bound[, step])`` when the bound is a non-constexpr parameter."""
    args = range_args(n.iter) if isinstance(n, cst.For) else []
    if not args:
        return None, None
    bound = args[0].value if len(args) == 1 else args[1].value
    if not (isinstance(bound, cst.Name) and bound.value in k.params and bound.value not in k.constexprs):
        return None, None
    step = args[2].value if len(args) >= 3 else None
    return bound.value, (1 if step is None else step.value if isinstance(step, cst.Name)
                         else int(step.value) if isinstance(step, cst.Integer) else "?")


def kernel_facts(t: Tree, k: CstKernel) -> KernelFacts:
    node = k.node
    pid: dict[int, str] = {}
    pid_calls = 0
    axes: list[int] = []
    for n in walk(node):
        if isinstance(n, cst.Call) and call_name(n) == "tl.program_id":
            pid_calls += 1
            if (ax := _axis(n)) is not None and ax not in axes:
                axes.append(ax)
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
                and isinstance(n.value, cst.Call) and call_name(n.value) == "tl.program_id"):
            ax = _axis(n.value)
            if ax is not None:
                pid.setdefault(ax, n.targets[0].target.value)
    dep = dependents(node.body, set(pid.values()), calls={"tl.program_id"})
    in_loop = _inside_loops(node)

    def depends(e: cst.CSTNode | None) -> bool:  # an expression mentioning tl.program_id directly depends on it too
        if e is None:
            return False
        return bool(names(e) & dep) or any(isinstance(m, cst.Call) and call_name(m) == "tl.program_id" for m in walk(e))

    aranges, accesses, loops, reductions, dots, div_mod = [], [], [], [], [], []
    value_used: set[int] = set()
    for n in walk(node):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and isinstance(n.value, cst.Call):
            value_used.add(id(n.value))
    for n in walk(node):
        if isinstance(n, cst.Call):
            name = call_name(n)
            if name == "tl.arange":
                s, e = arg_value(n, "start", 0), arg_value(n, "end", 1)
                e_text = t.code(e) if e is not None else "?"
                const = isinstance(e, cst.Integer) or (isinstance(e, cst.Name) and e.value in k.constexprs)
                aranges.append((t.code(s) if s is not None else "?", e_text, const))
            elif name in ("tl.load", "tl.store") or name in ATOMICS:
                ptr = arg_value(n, "pointer", 0)
                mask = arg_value(n, "mask", 1 if name == "tl.load" else 2)
                accesses.append(Access(name, t.code(ptr) if ptr is not None else "?",
                                       t.code(mask) if mask is not None else None,
                                       depends(ptr), id(n) in in_loop, n, id(n) in value_used))
            elif name in REDUCTIONS:
                axis = arg_value(n, "axis", 1)
                reductions.append((name, t.code(axis) if axis is not None else None))
            elif name == "tl.dot":
                ops = [t.code(a.value) for a in n.args if a.keyword is None and not a.star][:2]
                dots.append(Dot(_precision(t, n), _dot_tiles(t, k, n), id(n) in in_loop, n, ops))
        elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.FloorDivide, cst.Modulo)):
            if depends(n.left):
                div_mod.append(t.code(n))
        elif isinstance(n, (cst.For, cst.While)):
            adv = sorted({tg for m in walk(n.body) if isinstance(m, cst.AugAssign) for tg in names(m.target)})
            loads = [t.code(load_ptr) for m in walk(n.body)
                     if isinstance(m, cst.Call) and call_name(m) == "tl.load"
                     and (load_ptr := arg_value(m, "pointer", 0)) is not None]
            header = t.code(n.iter) if isinstance(n, cst.For) else t.code(n.test)
            loops.append(Loop(header, "for" if isinstance(n, cst.For) else "while", adv, loads, n, *_range_bound(k, n)))
    rebound = sorted({tg for n in walk(node.body) for tg in assigned(n)[0]
                      if isinstance(n, (cst.Assign, cst.AugAssign)) and tg in k.params})
    return KernelFacts(
        name=k.name, params=k.params, constexprs=k.constexprs, autotuned=k.autotuned, pid=pid, pid_calls=pid_calls,
        aranges=aranges, accesses=accesses, loops=loops, reductions=reductions, dots=dots, div_mod=div_mod,
        branches=sum(isinstance(n, cst.If) for n in walk(node.body)),
        early_returns=sum(isinstance(n, cst.Return) for n in walk(node.body)), pid_dependent=dep,
        rebound_params=rebound, heuristics=k.heuristics, program_axes=axes, tree=t, kernel=k)


def _precision(t: Tree, call: cst.Call) -> str | None:
    p = arg_value(call, "input_precision")
    if isinstance(p, cst.SimpleString):
        value = p.evaluated_value  # str, or bytes for a b"..." literal (never a valid precision)
        return value.lower() if isinstance(value, str) else value.decode().lower()
    if p is not None:
        return t.code(p)
    tf = arg_value(call, "allow_tf32")
    if isinstance(tf, cst.Name) and tf.value == "False":
        return "ieee"
    return None


def _dot_tiles(t: Tree, k: CstKernel, call: cst.Call) -> list[str]:
    """Constexprs that size the aranges feeding the dot's operands (through one level of assignment)."""
    defs: dict[str, cst.CSTNode] = {}
    for n in walk(k.node):
        if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
            defs.setdefault(n.targets[0].target.value, n.value)
    seen: list[str] = []
    frontier: list[cst.CSTNode] = [a.value for a in call.args[:2]]
    for _depth in range(4):
        nxt: list[cst.CSTNode] = []
        for e in frontier:
            for m in walk(e):
                if isinstance(m, cst.Call) and call_name(m) == "tl.arange":
                    end = arg_value(m, "end", 1)
                    if isinstance(end, cst.Name) and end.value in k.constexprs and end.value not in seen:
                        seen.append(end.value)
                elif isinstance(m, cst.Name) and m.value in defs:
                    nxt.append(defs.pop(m.value))
        frontier = nxt
    return seen


def launch_facts(t: Tree, site: CstLaunch) -> LaunchFacts:
    grid = resolved_grid(t, site, unique=True)
    elements = [t.code(e.value) for e in grid.elements] if isinstance(grid, (cst.Tuple, cst.List)) else None
    meta = {a.keyword.value: t.code(a.value) for a in site.call.args if a.keyword is not None}
    buffers = {}
    for n in walk(site.function) if site.function is not None else []:
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name)
                and is_allocation(n.value)):
            buffers[n.targets[0].target.value] = t.code(n.value)
    return LaunchFacts(site.kernel, t.code(grid), elements, isinstance(grid, cst.Lambda), meta,
                       site.function.name.value if site.function is not None else None, buffers)


def module_facts(t: Tree) -> ModuleFacts:
    return ModuleFacts({name: kernel_facts(t, k) for name, k in t.kernels.items()},
                       [launch_facts(t, s) for s in t.launches])
