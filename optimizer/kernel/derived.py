"""Kernel facts L1's cause findings read beyond the transforms' own, derived on first use from ``KernelFacts``.

The same nodes and the same data flow as every other fact (``flow.dependents``, ``flow.pointer_bases``): a value is
*vector* when it derives from ``tl.arange``, *loaded* when it derives from a ``tl.load``, per-program when it depends
on a program id (``KernelFacts.pid_dependent``). Each fact comes with the source lines it is read from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from optimizer.kernel.flow import calls_in, dependents, names, pointer_bases
from optimizer.rewrite.tree import arg_value, call_name, walk

if TYPE_CHECKING:
    from optimizer.kernel.model import KernelFacts

__all__ = ["accumulates_reduction", "div_mod_lines", "grouped_order", "loop_reductions", "loop_statements",
           "module_names", "passes", "pointer_advances", "scatter_atomics", "words"]


def _fn(f: KernelFacts) -> cst.FunctionDef:
    return f.parsed.node


def _per_program(f: KernelFacts, e: cst.CSTNode) -> bool:
    return bool(names(e) & f.pid_dependent) or calls_in(e, {"tl.program_id"})


def div_mod_lines(f: KernelFacts) -> list[int]:
    """``//`` and ``%`` on per-element values: a vector (``tl.arange``-derived) left side, or, in a kernel without a
    block range (one element per program), a program-id-derived one."""
    fn = _fn(f)
    vector = dependents(fn.body, set(), calls={"tl.arange"})
    out = [n for n in walk(fn) if isinstance(n, cst.BinaryOperation)
           and isinstance(n.operator, (cst.FloorDivide, cst.Modulo))
           and (calls_in(n.left, {"tl.arange"}) or names(n.left) & vector
                or (not f.block_range and _per_program(f, n.left)))]
    return f.lines(out)


def scatter_atomics(f: KernelFacts) -> list[tuple[int, str]]:
    """(line, pointer parameter) of atomics indexed by a loaded value at a per-program address (a histogram)."""
    k = f.parsed
    loaded = dependents(k.node.body, set(), calls={"tl.load"})
    out = []
    for a in f.atomics:
        if not a.pid_dependent:
            continue  # the same address in every program
        ptr = arg_value(a.node, "pointer", 0)
        if ptr is not None and names(ptr) & loaded and (bs := sorted(pointer_bases(k, ptr))):
            out.append((f.line(a.node), bs[0]))
    return out


def _load_bases(f: KernelFacts, node: cst.CSTNode) -> list[tuple[cst.Call, cst.BaseExpression, set[str]]]:
    """(load, its pointer, the pointer's bases) of each ``tl.load`` under ``node``."""
    k = f.parsed
    out = []
    for c in walk(node):
        if isinstance(c, cst.Call) and call_name(c) == "tl.load" and (ptr := arg_value(c, "pointer", 0)) is not None:
            out.append((c, ptr, pointer_bases(k, ptr)))
    return out


def passes(f: KernelFacts) -> dict[str, list[int]]:
    """Pointer parameter -> the first line of each top-level loop loading through it; and, outside loops, the lines
    of a pointer expression loaded twice (a second pass over the same data)."""
    fn = _fn(f)
    out: dict[str, list[int]] = {}
    straight: dict[str, tuple[str, list[int]]] = {}
    for stmt in fn.body.body:
        if isinstance(stmt, (cst.For, cst.While)):
            for base in sorted({b for _, _, bs in _load_bases(f, stmt) for b in bs}):
                out.setdefault(base, []).append(f.line(stmt))
            continue
        for c, ptr, bs in _load_bases(f, stmt):
            if bs:
                text = f.tree.code(ptr) if f.tree is not None else ""
                straight.setdefault(text, (sorted(bs)[0], []))[1].append(f.line(c))
    for base, lines in straight.values():
        if len(lines) >= 2:
            out.setdefault(base, []).extend(lines)
    return out


def pointer_advances(f: KernelFacts) -> list[int]:
    """``p += ...`` on a (non-constexpr) parameter inside a loop."""
    params = set(f.params) - set(f.constexprs)
    return f.lines([n for lp in f.loops for n in walk(lp.node) if isinstance(n, cst.AugAssign)
                    and isinstance(n.operator, cst.AddAssign) and isinstance(n.target, cst.Name)
                    and n.target.value in params])


def _red(e: cst.CSTNode, fns: tuple[str, ...]) -> bool:
    return isinstance(e, cst.Call) and call_name(e) in fns


def accumulates_reduction(st: cst.CSTNode) -> bool:
    """``s += tl.sum(..)``, ``s = s + tl.sum(..)``, ``s = tl.maximum(s, tl.max(..))`` or ``s = tl.max(tl.maximum(..,
    s))`` (or min): a block reduction to a scalar that is carried across iterations of the loop whose body holds
    ``st``."""
    if isinstance(st, cst.AugAssign) and isinstance(st.operator, cst.AddAssign) and isinstance(st.target, cst.Name):
        return _red(st.value, ("tl.sum",))
    if not (isinstance(st, cst.Assign) and len(st.targets) == 1 and isinstance(st.targets[0].target, cst.Name)):
        return False
    acc, v = st.targets[0].target.value, st.value
    if isinstance(v, cst.BinaryOperation) and isinstance(v.operator, cst.Add):
        return any(isinstance(a, cst.Name) and a.value == acc and _red(b, ("tl.sum",))
                   for a, b in ((v.left, v.right), (v.right, v.left)))
    if isinstance(v, cst.Call) and call_name(v) in ("tl.maximum", "tl.minimum") and len(v.args) == 2:
        inner = "tl.max" if call_name(v) == "tl.maximum" else "tl.min"
        a, b = v.args[0].value, v.args[1].value
        return any(isinstance(p, cst.Name) and p.value == acc and _red(q, (inner,)) for p, q in ((a, b), (b, a)))
    if isinstance(v, cst.Call) and call_name(v) in ("tl.max", "tl.min") and v.args:
        pair = "tl.maximum" if call_name(v) == "tl.max" else "tl.minimum"
        arg = v.args[0].value  # the max of a block widened by the running value: the same as the two-step form
        return _red(arg, (pair,)) and isinstance(arg, cst.Call) and any(
            isinstance(a.value, cst.Name) and a.value.value == acc for a in arg.args)
    return False


def module_names(module: cst.Module) -> set[str]:
    """Names the module binds at its top level: a jitted kernel can read a global only as a compile-time constant."""
    out: set[str] = set()
    for stmt in module.body:
        for n in walk(stmt) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(n, (cst.Assign, cst.AnnAssign)):
                for tg in n.targets if isinstance(n, cst.Assign) else [n]:
                    if isinstance(tg.target, cst.Name):
                        out.add(tg.target.value)
    return out


def loop_statements(body: list[cst.CSTNode], static: set[str]) -> list[cst.CSTNode]:
    """A loop body's statements, the branches of an ``if`` on compile-time values (constexprs, globals) included:
    the compiler keeps one branch, so an accumulation there is one of the loop's own (a lane accumulator updated in
    a branch that is compiled away stays at its neutral start)."""
    out: list[cst.CSTNode] = []
    for s in body:
        if isinstance(s, cst.If) and {n.value for n in walk(s.test) if isinstance(n, cst.Name)} <= static | {
                "True", "False", "None", "not", "and", "or"}:
            node: cst.CSTNode | None = s
            while isinstance(node, cst.If):
                out += loop_statements(list(node.body.body), static)
                node = node.orelse
            if isinstance(node, cst.Else):
                out += loop_statements(list(node.body.body), static)
        else:
            out.append(s)
    return out


def loop_reductions(f: KernelFacts) -> list[int]:
    """Lines of block reductions accumulated across a loop's iterations (statements directly in a loop body, or in a
    branch of an ``if`` there on compile-time values: ``loop_statements``)."""
    found = []
    static = set(f.constexprs) | (module_names(f.tree.module) if f.tree is not None else set())
    for lp in f.loops:
        for st in loop_statements(list(getattr(lp.node.body, "body", [])), static):
            smalls = st.body if isinstance(st, cst.SimpleStatementLine) else []
            found += [s for s in smalls if accumulates_reduction(s)]
    return f.lines(found)


def words(node: cst.CSTNode, *, lower: bool = True) -> str:
    """The identifiers and string literals of ``node`` (docstring included, comments not) as one text: what the
    naming heuristics (a ``GROUP_M`` swizzle, a ``mask`` variable) search."""
    text = " ".join(n.value if isinstance(n, cst.Name) else str(n.value) for n in walk(node)
                    if isinstance(n, (cst.Name, cst.SimpleString, cst.FormattedStringText)))
    return text.lower() if lower else text


def grouped_order(f: KernelFacts) -> bool:
    """A GROUP / swizzle remap of the program id, by its names (decorators, parameters, body)."""
    text = words(_fn(f))
    return "group" in text or "swizzle" in text
