"""Helpers the structural transforms share: launch-site checks, fresh names, masks, the host grid."""

from __future__ import annotations

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.tree import CstLaunch, Tree, arg_value, call_name, index_value, node_code, walk

__all__ = [
    "and_mask",
    "call_arg",
    "defaulted_positional_reasons",
    "fresh",
    "grid_node",
    "host_arg_text",
    "launch_arg",
    "launch_record",
    "launch_statement",
    "meta_grid_of",
    "meta_keys",
    "single_site_reasons",
    "statement_reasons",
]


def single_site_reasons(t: Target, *, meta_grid: bool = False, decorated: bool = False,
                        star_args: bool = False) -> list[str]:
    """Reasons a host-rewriting transform cannot edit the launch: one tuple-grid launch is needed. A transform that
    changes a block where it is set (the launch keyword, an autotune config, a heuristic) also takes a grid over
    ``META`` (``meta_grid``: the grid already follows the block), a kernel under ``@triton.autotune`` /
    ``@triton.heuristics`` (``decorated``: it checks which names the decorators set), and a launch through ``*args``
    (``star_args``: when it leaves the launch's arguments alone)."""
    out = []
    if len(t.sites) != 1:
        out.append(f"launched from {len(t.sites)} places (the host rewrite needs exactly one)")
        return out
    lf = t.launches[0]
    if (lf.grid_is_lambda or lf.grid_elements is None) and not (meta_grid and meta_grid_of(t) is not None):
        out.append(f"grid {lf.grid} is not a tuple expression (a lambda over META or a helper call)"
                   + (" returning a tuple" if meta_grid else ""))
    if (t.kernel.autotuned or t.kernel.heuristics) and not decorated:
        out.append("kernel is autotuned / has heuristics (its meta-parameters are not the launch's)")
    if any(a.star for a in t.sites[0].call.args) and not star_args:
        out.append("the launch passes *args / **kwargs")
    out += defaulted_positional_reasons(t.kernel.node, [s.call for s in t.sites])
    return out


def meta_grid_of(t: Target) -> tuple[str, list[cst.BaseExpression]] | None:
    """(META parameter, grid elements) when the single launch's grid is a function of the meta-parameters that
    returns a tuple: ``lambda META: (...)`` (inline or assigned once), or the name of a function defined once in
    the launching function (else at the module's top level) with one parameter and one ``return`` of a tuple
    (``def grid(args): return cdiv(n, args["BLOCK"]), heads``). None otherwise."""
    site = t.sites[0]
    g = grid_node(site, t.tree)
    params: cst.Parameters | None = None
    body: cst.BaseExpression | None = None
    if isinstance(g, cst.Name) and site.function is not None \
            and len(assigns := t.tree.assignments(site.function, g.value)) == 1:
        g = assigns[0].value  # read, never edited here: a grid variable other launches share is followed too
    if isinstance(g, cst.Lambda):
        params, body = g.params, g.body
    elif isinstance(g, cst.Name):
        scope = site.function if site.function is not None else t.tree.module
        defs = [n for n in walk(scope) if isinstance(n, cst.FunctionDef) and n.name.value == g.value] or [
            n for n in t.tree.module.body if isinstance(n, cst.FunctionDef) and n.name.value == g.value]
        rets = [n for n in walk(defs[0]) if isinstance(n, cst.Return)] if len(defs) == 1 else []
        if len(rets) == 1 and rets[0].value is not None:
            params, body = defs[0].params, rets[0].value
    if params is None or body is None or len(params.params) != 1 or isinstance(params.star_arg, cst.Param):
        return None
    if not isinstance(body, (cst.Tuple, cst.List)) or not all(isinstance(e, cst.Element) for e in body.elements):
        return None
    return params.params[0].name.value, [e.value for e in body.elements]


def meta_keys(node: cst.CSTNode, meta: str) -> set[str]:
    """The string keys ``node`` reads from the meta-parameter dict ``meta`` (``META["BLOCK"]``)."""
    out = set()
    for n in walk(node):
        if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == meta \
                and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index) \
                and isinstance(k := n.slice[0].slice.value, cst.SimpleString) and isinstance(k.evaluated_value, str):
            out.add(k.evaluated_value)
    return out


def defaulted_positional_reasons(func: cst.FunctionDef, calls: list[cst.Call]) -> list[str]:
    """New parameters go before the first defaulted one (``Tree.add_params``): refused only when a launch passes a
    defaulted parameter by position, since its value would bind to the inserted parameter instead."""
    params = list(func.params.params)
    first = next((i for i, p in enumerate(params) if p.default is not None), None)
    if first is None:
        return []
    for call in calls:
        positional = [a for a in call.args if a.keyword is None]
        if len(positional) > first:
            return [f"the launch passes defaulted parameter {params[first].name.value} by position (new parameters go "
                    "before it; pass it by keyword)"]
    return []


def fresh(t: Target, base: str) -> str:
    """``base``, or ``base`` with a suffix, unused anywhere in the module."""
    used = {n.value for n in walk(t.tree.module) if isinstance(n, cst.Name)}
    name, i = base, 2
    while name in used:
        name, i = f"{base}{i}", i + 1
    return name


def grid_node(site: CstLaunch, tree: Tree | None = None) -> cst.BaseExpression:
    """The node to rewrite for the launch's grid: the value of ``grid = ...`` when the launch names a variable
    assigned once in the launching function (and used by this launch only), else the subscript ``kernel[<this>]``."""
    sub = site.call.func
    assert isinstance(sub, cst.Subscript)  # a launch is a call of kernel[grid] (Tree collects no other)
    own = index_value(sub.slice[0])
    if tree is not None and isinstance(own, cst.Name) and site.function is not None:
        assigns = tree.assignments(site.function, own.value)
        uses = [n for n in walk(site.function) if isinstance(n, cst.Name) and n.value == own.value]
        if len(assigns) == 1 and len(uses) == 2:  # the assignment target and this launch
            return assigns[0].value
    return own


def host_arg_text(t: Target, param: str) -> str | None:
    a = t.sites[0].arg_for(t.kernel, param)
    return t.tree.code(a) if a is not None else None


def launch_arg(t: Target, param: str, site: CstLaunch | None = None) -> cst.BaseExpression:
    """The expression the launch (``site``, else the target's first) passes for kernel parameter ``param``; refused
    when it passes none (the parameter keeps its default, or the launch spells its arguments out of reach)."""
    site = site if site is not None else t.sites[0]
    a = site.arg_for(t.kernel, param)
    if a is None:
        raise NotApplicable(f"the launch of {t.kernel.name} does not pass {param}")
    return a


def launch_statement(site: CstLaunch) -> cst.BaseStatement:
    """The launch's own statement line, which host rewrites insert next to or replace. A launch in a one-line suite
    (``if n: k[grid](x)``) or in a compound statement's header has none: refused (an edit keyed on no statement
    would be dropped when the tree is rendered, leaving the rewrite half done)."""
    if site.statement is None:
        raise NotApplicable(_no_statement(site))
    return site.statement


def statement_reasons(t: Target) -> list[str]:
    """``launch_statement``'s refusal as a precondition: the first launch has no statement line of its own."""
    return [_no_statement(s) for s in t.sites[:1] if s.statement is None]


def _no_statement(site: CstLaunch) -> str:
    return (f"the launch of {site.kernel} is not a statement line of its own (a one-line suite such as "
            "`if n: kernel[grid](...)`): the host rewrite inserts next to it")


def call_arg(call: cst.Call, name: str, pos: int | None = None) -> cst.BaseExpression:
    """``arg_value`` of an argument ``call`` must pass (keyword ``name`` or positional ``pos``); refused when it
    does not (the argument is missing, or passed through ``*args`` the transform cannot read)."""
    v = arg_value(call, name, pos)
    if v is None:
        raise NotApplicable(f"`{node_code(call)}` does not pass {name} where the rewrite reads it")
    return v


def launch_record(t: Target, ctx: RecipeContext) -> dict:
    return next((r for r in ctx.launches if r.get("kernel") == t.kernel.name), {})


def and_mask(t: Target, call: cst.Call, term: str, is_load: bool) -> None:
    """AND ``term`` into the mask of a tl.load / tl.store / atomic (adding ``mask=`` where there is none)."""
    pos = 1 if is_load else 2
    mask = arg_value(call, "mask", pos)
    if mask is None:
        t.tree.add_keyword(call, "mask", term)
        return
    t.tree.edit(mask, lambda m: cst.parse_expression(f"({cst.Module([]).code_for_node(m)}) & {term}"))


def top_statement(t: Target, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The kernel's top-level statement that is ``call`` alone (an atomic or store whose value is unused), else None
    (the call sits in a loop or a branch, or its value is used)."""
    return next((s for s in t.kernel.node.body.body
                 if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Expr)
                 and s.body[0].value is call), None)


def is_call(node: cst.CSTNode, *names: str) -> bool:
    return isinstance(node, cst.Call) and call_name(node) in names
