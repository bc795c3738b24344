"""``launch_loop_grid``: a kernel launched once per iteration of a host loop -> one launch with the loop as a grid axis.

Card ``fuse-launches-for-launch-bound`` (cause ``launch_overhead``, L1 feature ``launch_in_loop``). Before::

    for e in range(E):
        expert_kernel[grid](x[e], W[e], out[e], C, D, F, BLOCK_M=16, ...)

After::

    expert_kernel[(*grid_elems, E)](x, W, out, C, D, F, BLOCK_M=16, ..., x_ptr_loop_stride=x.stride(0), ...)

and in the kernel, before its first statement, every pointer that received a per-iteration slice moves to its
slice: ``x_ptr = x_ptr + tl.program_id(2).to(tl.int64) * x_ptr_loop_stride``. Each iteration's addresses are
exactly those of ``x[e]`` (a view at ``e * x.stride(0)``), so the kernel computes the same thing; the E launches
become one (the H200 run measured ~2 ms of launch overhead for 64 expert launches of microsecond work).

Domain, each refused with its reason: one launch site, a tuple grid of at most two axes (the loop takes the
third), not autotuned; the loop is ``for v in range(n)``, not nested in another loop, with the launch as its only
statement; the loop variable appears in the launch only as a whole argument ``T[v]`` (never in the grid, in
sizes, strides or other expressions); at least one such argument. Iterations of one launch are independent in
that form (each writes its own slice), so running them as one grid keeps the result.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from optimizer.recipes.base import RecipeContext
from optimizer.rewrite.common import fresh, grid_node, single_site_reasons
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import walk

__all__ = ["LaunchLoopGrid"]


def _loops(fn: cst.FunctionDef) -> list[cst.For]:
    return [n for n in walk(fn) if isinstance(n, cst.For)]


def _enclosing(t: Target) -> cst.For | None:
    site = t.sites[0]
    if site.function is None or site.statement is None:
        return None
    around = [f for f in _loops(site.function) if any(n is site.statement for n in walk(f.body))]
    return min(around, key=lambda f: sum(1 for _ in walk(f)), default=None)  # the innermost


def _loop_var(loop: cst.For) -> tuple[str, str] | None:
    """``for v in range(n)`` -> (v, n text)."""
    it = loop.iter
    if (isinstance(loop.target, cst.Name) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
            and it.func.value == "range" and len(it.args) == 1 and it.args[0].keyword is None):
        return loop.target.value, cst.Module([]).code_for_node(it.args[0].value)
    return None


def _sliced(e: cst.BaseExpression, var: str) -> cst.BaseExpression | None:
    """``T[var]`` -> T."""
    if (isinstance(e, cst.Subscript) and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index)
            and isinstance(e.slice[0].slice.value, cst.Name) and e.slice[0].slice.value.value == var):
        return e.value
    return None


def _uses(node: cst.CSTNode, var: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == var for n in walk(node))


class LaunchLoopGrid:
    """One launch per host-loop iteration -> one launch whose last grid axis walks the iterations."""

    kind = "launch_loop_grid"
    card = "fuse-launches-for-launch-bound"

    def _plan(self, t: Target) -> tuple[list[str], dict[str, Any]]:
        out = single_site_reasons(t)
        if out:
            return out, {}
        site, lf = t.sites[0], t.launches[0]
        if len(lf.grid_elements or []) > 2:
            return [f"grid {lf.grid} already has three axes (the loop needs one)"], {}
        loop = _enclosing(t)
        if loop is None:
            return ["the launch is not inside a host loop"], {}
        lv = _loop_var(loop)
        if lv is None:
            return ["the loop is not `for v in range(n)`"], {}
        var, count = lv
        outer = _loops(site.function) if site.function is not None else []
        if any(o is not loop and any(n is loop for n in walk(o.body)) for o in outer):
            return [f"the loop over {var} is nested in another loop"], {}
        body = loop.body.body  # type: ignore[attr-defined]
        if len(body) != 1 or body[0] is not site.statement or loop.orelse is not None:
            return [f"the loop over {var} holds more than the launch (its other statements would run once, not "
                    f"{count} times)"], {}
        if _uses(site.call.func, var):
            return [f"the grid depends on {var}"], {}
        sliced: dict[str, str] = {}
        for i, a in enumerate(site.call.args):
            if not _uses(a.value, var):
                continue
            base = _sliced(a.value, var)
            pos = t.kernel.params[i] if i < len(t.kernel.params) else None
            param = a.keyword.value if a.keyword is not None else pos
            if base is None or param is None or param in t.kernel.constexprs:
                return [f"{var} is used in the argument {t.tree.code(a.value)} other than as a whole slice "
                        f"T[{var}]"], {}
            sliced[param] = t.tree.code(base)
        if not sliced:
            return [f"no argument is sliced by {var}"], {}
        return [], {"loop": loop, "var": var, "count": count, "sliced": sliced}

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return self._plan(t)[0]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"axis": len(t.launches[0].grid_elements or [])}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        _, plan = self._plan(t)
        tree, k, site = t.tree, t.kernel, t.sites[0]
        axis, var, count, sliced = point["axis"], plan["var"], plan["count"], plan["sliced"]
        strides = {p: fresh(t, f"{p}_loop_stride") for p in sliced}
        it = fresh(t, "loop_it")
        prologue = f"{it} = tl.program_id({axis}).to(tl.int64)\n" + "".join(
            f"{p} = {p} + {it} * {strides[p]}\n" for p in sliced)
        first = k.node.body.body[0]  # type: ignore[attr-defined]
        doc = isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        (tree.insert_after if doc else tree.insert_before)(first, prologue)
        tree.add_params(k.node, list(strides.values()))
        for a in site.call.args:
            if _uses(a.value, var):
                tree.replace(a.value, tree.code(_sliced(a.value, var)))  # type: ignore[arg-type]
        for p, base in sliced.items():
            tree.add_keyword(site.call, strides[p], f"{base}.stride(0)")
        elems = t.launches[0].grid_elements or []
        tree.replace(grid_node(site, tree), "(" + ", ".join([*elems, count]) + ",)")
        tree.unwrap(plan["loop"])
        return (f"{k.name}: {count} launches from `for {var} in range({count})` -> one launch, grid axis {axis} walks "
                f"{var}; {', '.join(sliced)} move to their slice by tl.program_id({axis}) x the slice stride")
