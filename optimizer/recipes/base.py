"""Shared machinery of the offline recipes: parsing, locating tunable values, edits, and the point search.

``next_point`` is the evidence-guided search: among untried points of a recipe's search space it picks the
one nearest the current configuration (fewest parameters changed, smallest step), preferring the direction
the bottleneck class suggests (e.g. more warps and larger blocks when memory-bound, fewer when occupancy-limited).
"""

from __future__ import annotations

import ast
import difflib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from optimizer.rewrite.errors import NotApplicable
from optimizer.source import (
    Kernel,
    LaunchSite,
    SourceText,
    assignments_in,
    find_kernels,
    find_launches,
    module_constant,
)

__all__ = ["NotApplicable", "RecipeContext", "RewriteResult", "next_point", "unified_diff"]

_LAUNCH_OPTIONS = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}


@dataclass
class RecipeContext:
    source: str
    filename: str = "candidate.py"
    bottleneck: str = "unknown"
    launches: list[dict[str, Any]] = field(default_factory=list)
    tried: list[dict[str, Any]] = field(default_factory=list)  # 'applied' dicts already tried on this base
    backend: str = "cuda"
    num_sms: int = 132
    hot_kernel: str | None = None
    new_filename: str = "candidate_new.py"
    #: the problem's fp32 tolerance ``{"atol": .., "rtol": ..}`` (None: unknown; precision recipes then stay exact)
    tolerance: dict[str, float] | None = None
    #: the problem's tolerance per dtype name (``"bfloat16": {"atol": .., "rtol": ..}``); outputs are judged under
    #: their own dtype's entry, so a recipe that rounds to 16 bits reads the entry of the type it stores
    tolerances: dict[str, dict[str, float]] = field(default_factory=dict)
    #: evidence tokens of earlier levels, prefixed: ``ir:register_spill`` (L3 signatures), ``code:tl.dot`` (L1
    #: features), ``cause:register_spills`` (decided causes); recipe domains are checked against them
    evidence: list[str] = field(default_factory=list)
    #: the compile target whose code a rewrite must change (``optimizer.rewrite.effect``: a candidate compiling to
    #: the same PTX as its base for every recorded launch is refused as a no-op); None: only the static check that a
    #: launch value is not overridden by the kernel's ``@triton.heuristics`` / ``@triton.autotune``
    effect_target: str | None = None


@dataclass
class RewriteResult:
    kind: str
    source: str
    diff: str
    description: str
    applied: dict[str, Any]


def unified_diff(old: str, new: str, a: str, b: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), fromfile=f"a/{a}", tofile=f"b/{b}"))


@dataclass
class _Parsed:
    tree: ast.Module
    st: SourceText
    kernels: dict[str, Kernel]
    sites: list[LaunchSite]


def _parse(ctx: RecipeContext) -> _Parsed:
    try:
        tree = ast.parse(ctx.source)
    except SyntaxError as exc:
        raise NotApplicable(f"candidate does not parse: {exc}") from None
    kernels = find_kernels(tree)
    if not kernels:
        raise NotApplicable("no @triton.jit kernel in the candidate")
    return _Parsed(tree, SourceText(ctx.source), kernels, find_launches(tree, kernels))


def _target(p: _Parsed, ctx: RecipeContext, pred: Callable[[Kernel], bool] | None = None) -> tuple[Kernel, list[LaunchSite]]:
    """The kernel to rewrite: the profiled hot kernel, else the most launched, else the first launched one."""
    launched = [s.kernel for s in p.sites]
    counts: dict[str, int] = {}
    for rec in ctx.launches:
        counts[rec.get("kernel", "")] = counts.get(rec.get("kernel", ""), 0) + int(rec.get("launches", 1))
    order = sorted(dict.fromkeys(launched), key=lambda n: (n != ctx.hot_kernel, -counts.get(n, 0), launched.index(n)))
    for name in order:
        k = p.kernels[name]
        if pred is None or pred(k):
            return k, [s for s in p.sites if s.kernel == name]
    raise NotApplicable("no launched kernel satisfies the recipe's preconditions")


def _finish(kind: str, ctx: RecipeContext, new: str, description: str, applied: dict[str, Any]) -> RewriteResult:
    if new == ctx.source:
        raise NotApplicable("the rewrite would not change the source")
    if applied in ctx.tried:
        raise NotApplicable("this exact rewrite was already tried on this base")
    try:
        ast.parse(new)
    except SyntaxError as exc:  # a bug in an applier: never hand out broken code
        raise NotApplicable(f"internal: rewrite produced invalid Python ({exc})") from None
    return RewriteResult(kind, new, unified_diff(ctx.source, new, ctx.filename, ctx.new_filename), description, applied)


def _insert_keyword(st: SourceText, call: ast.Call, text: str) -> None:
    last = (call.args + [k.value for k in call.keywords])
    anchor = max(last, key=lambda n: (n.end_lineno, n.end_col_offset)) if last else None
    if anchor is None:
        raise NotApplicable("launch without arguments")
    st.insert(st.span(anchor)[1], f", {text}")


def _remove_keyword(st: SourceText, call: ast.Call, kw: ast.keyword) -> None:
    items = sorted(call.args + [k.value for k in call.keywords], key=lambda n: (n.lineno, n.col_offset))
    idx = items.index(kw.value)
    if idx == 0:
        raise NotApplicable(f"cannot remove the only argument {kw.arg}")
    prev_end = st.span(items[idx - 1])[1]
    st.replace_range(prev_end, st.span(kw.value)[1], "")


@dataclass
class _Knob:
    """Where a tunable value lives in the source and how to set it."""

    name: str
    current: Any
    nodes: list[ast.expr]  # literal nodes to replace (or empty: insert a keyword)
    sites: list[LaunchSite]
    is_option: bool
    heuristic: bool = False  # the value is a @triton.heuristics lambda's body (current: the recorded launch's)

    def set(self, st: SourceText, value: Any) -> None:
        if self.nodes:
            for node in self.nodes:
                st.replace(node, repr(value))
        else:
            for site in self.sites:
                _insert_keyword(st, site.call, f"{self.name}={value!r}")


def _literal_of(p: _Parsed, site: LaunchSite, expr: ast.expr | None) -> ast.Constant | None:
    """The literal that defines ``expr``: itself, or the single literal assignment of the name it refers to."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return expr
    if isinstance(expr, ast.Name):
        assigns = assignments_in(site.function, expr.id)
        if len(assigns) == 1 and isinstance(assigns[0].value, ast.Constant):
            return assigns[0].value
        unpacked = _unpacked_values(site.function, expr.id)  # BLOCK_M, BLOCK_N = 128, 64
        if not assigns and len(unpacked) == 1 and isinstance(unpacked[0], ast.Constant):
            return unpacked[0]
        if not assigns:
            mc = module_constant(p.tree, expr.id)
            if mc is not None and isinstance(mc.value, ast.Constant):
                return mc.value
    return None


def _unpacked_values(func: ast.FunctionDef | None, name: str) -> list[ast.expr]:
    """The values bound to ``name`` by tuple assignments ``a, name, c = x, y, z`` inside ``func``."""
    out: list[ast.expr] = []
    for n in ast.walk(func) if func is not None else []:
        if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple)
                and isinstance(n.value, ast.Tuple) and len(n.targets[0].elts) == len(n.value.elts)):
            out += [v for t, v in zip(n.targets[0].elts, n.value.elts) if isinstance(t, ast.Name) and t.id == name]
    return out


def _alias(k: Kernel, name: str) -> str | None:
    if name in k.constexprs:
        return name
    if name.upper().startswith("BLOCK"):
        if name.upper() == "BLOCK_K" and not any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith("dot")
                                                 for n in ast.walk(k.node)):
            return None  # BLOCK_K is a dot's reduction depth: never stand it in for a row or element block
        blocks = [c for c in k.constexprs if c.upper().startswith("BLOCK") and not c.upper().endswith("SUB")]
        if len(blocks) == 1:
            return blocks[0]
    return None


def _grid_expr(site: LaunchSite) -> tuple[ast.expr, ast.Assign | None]:
    """The grid expression (following one ``grid = ...`` assignment) and that assignment, if any."""
    g = site.grid
    if isinstance(g, ast.Name):
        assigns = assignments_in(site.function, g.id)
        if len(assigns) == 1:
            return assigns[0].value, assigns[0]
    return g, None


def _heuristic_value(p: _Parsed, k: Kernel, name: str) -> ast.expr | None:
    """The value a ``@triton.heuristics({name: lambda args: ...})`` of ``k`` computes for ``name`` (the lambda's
    body), or None when no heuristic sets it."""
    for d in k.node.decorator_list:
        if not (isinstance(d, ast.Call) and ast.unparse(d.func).endswith("heuristics") and d.args):
            continue
        table = d.args[0]
        if isinstance(table, ast.Name):
            mc = module_constant(p.tree, table.id)
            table = mc.value if mc is not None else table
        if isinstance(table, ast.Dict):
            for key, val in zip(table.keys, table.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == name and isinstance(val, ast.Lambda):
                    return val.body
    return None


def _knob(p: _Parsed, k: Kernel, sites: list[LaunchSite], name: str) -> _Knob | None:
    if name in _LAUNCH_OPTIONS:
        if k.autotuned:
            return None
        heur = _heuristic_value(p, k, name)
        if heur is not None:  # set at run time by the heuristic: edited there, never overridden from the launch
            return _Knob(name, None, [heur], sites, True, heuristic=True)
        nodes: list[ast.expr] = []
        current: Any = _LAUNCH_OPTIONS[name]
        for site in sites:
            kw = site.keyword(name)
            if kw is None:
                continue
            lit = _literal_of(p, site, kw.value)
            if lit is None:
                nodes.append(kw.value)  # an expression: replaced by the literal we choose
            else:
                nodes.append(lit)
                current = lit.value
        if nodes and len(nodes) != len(sites):
            return None  # some sites set it, others not: ambiguous
        return _Knob(name, current, nodes, sites, True)
    real = _alias(k, name)
    if real is None or k.autotuned:
        return None
    nodes, current = [], None
    for site in sites:
        expr = site.arg_for(k, real)
        lit = _literal_of(p, site, expr)
        if lit is None:
            return None  # derived from shapes (e.g. next_power_of_2(n)): changing it could break correctness
        nodes.append(lit)
        current = lit.value
        if expr is lit:  # a literal at the launch: the grid may repeat it
            g, _ = _grid_expr(site)
            nodes += [n for n in ast.walk(g) if isinstance(n, ast.Constant) and n.value == lit.value and n is not lit]
    uniq = list({id(n): n for n in nodes}.values())
    return _Knob(real, current, uniq, sites, False)


_PREF: dict[str, dict[str, int]] = {
    "memory_bound": {"warps": 1, "block": 1, "stages": 1},
    "latency_bound": {"warps": 1, "block": -1, "stages": 1},
    "occupancy_limited": {"warps": -1, "block": -1, "stages": -1},
    "compute_bound": {"warps": 1, "block": 1, "stages": 1},
    "sync_bound": {"warps": -1, "block": 1, "stages": 0},
    "scalar_bound": {"warps": 0, "block": 1, "stages": 0},
    "launch_bound": {"warps": 0, "block": 1, "stages": 0},
}


def _kind_of(name: str) -> str:
    return {"num_warps": "warps", "num_stages": "stages"}.get(name, "block")


def next_point(space: dict[str, list[Any]], current: dict[str, Any], tried: list[dict[str, Any]], bottleneck: str) -> dict[str, Any]:
    """The untried point nearest ``current``: fewest parameters changed, smallest step, preferred direction first."""
    names = list(space)
    seen = {tuple(sorted(t.items())) for t in tried} | {tuple(sorted(current.items()))}
    pref = _PREF.get(bottleneck, {})

    def score(point: dict[str, Any]) -> tuple[int, float]:
        changed = [n for n in names if point[n] != current.get(n)]
        cost = 0.0
        for n in changed:
            vals = sorted({*space[n], *([current[n]] if current.get(n) is not None else [])}, key=_sort_key)
            cur = current.get(n)
            i_new = vals.index(point[n])
            i_cur = vals.index(cur) if cur in vals else i_new
            cost += abs(i_new - i_cur)
            direction = 1 if _sort_key(point[n]) > _sort_key(cur) else -1
            want = pref.get(_kind_of(n), 0)
            if want and direction != want:
                cost += 0.5
        return len(changed), cost

    candidates = [dict(zip(names, combo)) for combo in itertools.product(*(space[n] for n in names))]
    candidates = [c for c in candidates if tuple(sorted(c.items())) not in seen]
    if not candidates:
        raise NotApplicable("every point of the search space was already tried on this base")
    return min(candidates, key=score)


def _sort_key(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, (int, float)) else (1, str(v))


