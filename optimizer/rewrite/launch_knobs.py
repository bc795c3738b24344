"""Where a tunable launch value lives in the candidate, and how to set it (``launch_params``, ``autotune``).

A knob is a launch option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) or a constexpr of the kernel.
An option is the literal passed at every launch (or a literal it names), the value a ``@triton.heuristics`` lambda
computes for it (edited there, never overridden from the launch), or, passed nowhere, a keyword to add. A constexpr
is only a knob when every launch passes a literal for it, directly or through one literal assignment (a local, an
unpacked tuple ``BLOCK_M, BLOCK_N = 128, 64``, a module constant): a shape-derived value (``next_power_of_2(n)``)
is left alone, since changing it could break correctness. A literal passed at the launch is also changed where the
grid repeats it, unless another constexpr passes the same literal (``BLOCK_M=64, BLOCK_N=64`` with a grid of
``cdiv(M, 64), cdiv(N, 64)``: which grid literal follows which block cannot be told, so neither is tunable). A
name the recipe searches stands in for the kernel's only ``BLOCK*`` constexpr (``alias``), but ``BLOCK_K`` only on
a kernel with a ``tl.dot`` (it names a dot's reduction depth, never a row block).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

import libcst as cst

from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree, call_name, dotted, walk

__all__ = ["LAUNCH_OPTIONS", "NOT_LITERAL", "alias", "find_knob", "grid_expr", "Knob", "mentions_dot"]

#: launch options and the value Triton uses when a launch does not pass one
LAUNCH_OPTIONS: dict[str, Any] = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}
NOT_LITERAL = object()


def literal_value(node: cst.CSTNode) -> Any:
    """The value of a literal node (a number, string, ``True`` / ``False`` / ``None``, ``...``), else
    ``NOT_LITERAL``."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Ellipsis):
        return ...
    return NOT_LITERAL


def _is_number(node: cst.CSTNode | None) -> TypeGuard[cst.Integer | cst.Float]:
    return isinstance(node, (cst.Integer, cst.Float))


@dataclass
class Knob:
    """A tunable value: the literal nodes to replace (none: a keyword to add at every launch)."""

    name: str
    current: Any
    nodes: list[cst.CSTNode]
    sites: list[CstLaunch]
    is_option: bool
    heuristic: bool = False  # the value is a @triton.heuristics lambda's body (current: the recorded launch's)

    def set(self, tree: Tree, value: Any) -> None:
        text = repr(value)
        if self.nodes:
            for node in self.nodes:
                tree.replace_in_parens(node, text)
        else:
            for site in self.sites:
                tree.add_keyword(site.call, self.name, text)


def mentions_dot(k: CstKernel) -> bool:
    """Whether the kernel's text names ``tl.dot`` (a call, an alias of it, or its docstring)."""
    for n in walk(k.node):
        if isinstance(n, cst.Attribute) and dotted(n).startswith("tl.dot"):
            return True
        if isinstance(n, cst.SimpleString) and "tl.dot" in n.value:
            return True
    return False


def alias(k: CstKernel, name: str) -> str | None:
    """The kernel's constexpr a searched name stands for: itself, else the only ``BLOCK*`` constexpr."""
    if name in k.constexprs:
        return name
    if name.upper().startswith("BLOCK"):
        if name.upper() == "BLOCK_K" and not any(isinstance(n, cst.Call) and call_name(n).endswith("dot")
                                                 for n in walk(k.node)):
            return None  # BLOCK_K is a dot's reduction depth: never stand it in for a row or element block
        blocks = [c for c in k.constexprs if c.upper().startswith("BLOCK") and not c.upper().endswith("SUB")]
        if len(blocks) == 1:
            return blocks[0]
    return None


def grid_expr(tree: Tree, site: CstLaunch) -> tuple[cst.BaseExpression, cst.Assign | None]:
    """The grid expression (following one ``grid = ...`` assignment in the launcher) and that assignment."""
    g = site.grid
    if isinstance(g, cst.Name):
        assigns = tree.assignments(site.function, g.value)
        if len(assigns) == 1:
            return assigns[0].value, assigns[0]
    return g, None


def module_constant(tree: Tree, name: str) -> cst.Assign | None:
    """The first module-level ``name = ...``."""
    for stmt in tree.module.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if (isinstance(small, cst.Assign) and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name):
                return small
    return None


def _unpacked_values(scope: cst.CSTNode | None, name: str) -> list[cst.BaseExpression]:
    """The values bound to ``name`` by tuple assignments ``a, name, c = x, y, z`` inside ``scope``."""
    out: list[cst.BaseExpression] = []
    for n in walk(scope) if scope is not None else []:
        if (isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Tuple)
                and isinstance(n.value, cst.Tuple) and len(n.targets[0].target.elements) == len(n.value.elements)):
            out += [v.value for t, v in zip(n.targets[0].target.elements, n.value.elements, strict=True)
                    if isinstance(t.value, cst.Name) and t.value.value == name]
    return out


def literal_of(tree: Tree, site: CstLaunch, e: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The literal that defines ``e``: itself, or the single literal assignment of the name it refers to."""
    if _is_number(e):
        return e
    if isinstance(e, cst.Name):
        assigns = tree.assignments(site.function, e.value)
        if len(assigns) == 1 and literal_value(assigns[0].value) is not NOT_LITERAL:
            return assigns[0].value
        unpacked = _unpacked_values(site.function, e.value)
        if not assigns and len(unpacked) == 1 and literal_value(unpacked[0]) is not NOT_LITERAL:
            return unpacked[0]
        if not assigns:
            mc = module_constant(tree, e.value)
            if mc is not None and literal_value(mc.value) is not NOT_LITERAL:
                return mc.value
    return None


def heuristic_value(tree: Tree, k: CstKernel, name: str) -> cst.BaseExpression | None:
    """The body of the ``@triton.heuristics({name: lambda args: ...})`` lambda of ``k``, or None."""
    for d in k.node.decorators:
        call = d.decorator
        if not (isinstance(call, cst.Call) and dotted(call.func).endswith("heuristics") and call.args):
            continue
        table = call.args[0].value
        if isinstance(table, cst.Name):
            mc = module_constant(tree, table.value)
            table = mc.value if mc is not None else table
        if isinstance(table, cst.Dict):
            for el in table.elements:
                if isinstance(el, cst.DictElement) and isinstance(el.value, cst.Lambda) \
                        and literal_value(el.key) == name:
                    return el.value.body
    return None


def find_knob(tree: Tree, k: CstKernel, sites: list[CstLaunch], name: str) -> Knob | None:
    """Where ``name`` (a launch option, or a constexpr or its alias) is set for ``k``; None when it cannot be tuned."""
    if name in LAUNCH_OPTIONS:
        if k.autotuned:
            return None
        heur = heuristic_value(tree, k, name)
        if heur is not None:  # set at run time by the heuristic: edited there, never overridden from the launch
            return Knob(name, None, [heur], sites, True, heuristic=True)
        nodes: list[cst.CSTNode] = []
        current: Any = LAUNCH_OPTIONS[name]
        for site in sites:
            kw = site.keyword(name)
            if kw is None:
                continue
            lit = literal_of(tree, site, kw.value)
            if lit is None:
                nodes.append(kw.value)  # an expression: replaced by the literal we choose
            else:
                nodes.append(lit)
                current = literal_value(lit)
        if nodes and len(nodes) != len(sites):
            return None  # some sites set it, others not: ambiguous
        return Knob(name, current, nodes, sites, True)
    real = alias(k, name)
    if real is None or k.autotuned:
        return None
    nodes, current = [], None
    for site in sites:
        e = site.arg_for(k, real)
        lit = literal_of(tree, site, e)
        if lit is None:
            return None  # derived from shapes (e.g. next_power_of_2(n)): changing it could break correctness
        nodes.append(lit)
        current = literal_value(lit)
        if e is lit:  # a literal at the launch: the grid may repeat it
            g, _ = grid_expr(tree, site)
            repeats = [n for n in walk(g)
                       if n is not lit and (v := literal_value(n)) is not NOT_LITERAL and v == current]
            if repeats and any(_is_number(x := site.arg_for(k, c)) and literal_value(x) == current
                               for c in k.constexprs if c != real):
                return None  # the grid repeats a literal two blocks pass (BLOCK_M=BLOCK_N=64): whose axis is unknown
            nodes += repeats
    uniq = list({id(n): n for n in nodes}.values())
    return Knob(real, current, uniq, sites, False)
