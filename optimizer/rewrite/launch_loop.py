"""``launch_loop_grid``: a kernel launched once per iteration of a host loop (or a nest of two) -> one launch with the
loops as grid axes.

Card ``fuse-launches-for-launch-bound`` (cause ``launch_overhead``, L1 feature ``launch_in_loop``). Before::

    for e in range(E):
        expert_kernel[grid](x[e], W[e], out[e], C, D, F, BLOCK_M=16, ...)

After::

    expert_kernel[(*grid_elems, E)](x, W, out, C, D, F, BLOCK_M=16, ..., x_ptr_loop_stride=x.stride(0), ...)

and in the kernel, before its first statement, every pointer that received a per-iteration slice moves to its
slice: ``x_ptr = x_ptr + tl.program_id(2).to(tl.int64) * x_ptr_loop_stride``. Each iteration's addresses are
exactly those of ``x[e]`` (a view at ``e * x.stride(0)``), so the kernel computes the same thing; the E launches
become one (the H200 run measured ~2 ms of launch overhead for 64 expert launches of microsecond work).

A perfect nest of two loops over a one-axis grid takes axes 1 and 2 (outer, inner)::

    for b in range(B):
        for h in range(H):
            s, p = scores[b, h], probs[b, h]
            row_kernel[(S,)](s, p, S, BLOCK=BLOCK)
    ->
    row_kernel[(S, B, H,)](scores, probs, S, BLOCK=BLOCK, s_ptr_loop_stride_b=scores.stride(0),
                           s_ptr_loop_stride_h=scores.stride(1), ...)
    # kernel: loop_b = tl.program_id(1).to(tl.int64); loop_h = tl.program_id(2).to(tl.int64)
    #         s_ptr = s_ptr + loop_b * s_ptr_loop_stride_b + loop_h * s_ptr_loop_stride_h

A slice is ``T[v]``, ``T[b, h]`` or ``T[b][h]`` (the loop variables in any order, each at most once, nothing else
in the index); it moves by ``program_id x T.stride(d)`` for the dimension d each variable indexes.

Domain, each refused with its reason: one launch site, a tuple grid, not autotuned; one loop ``for v in range(n)``
over a grid of at most two axes, or two perfectly nested ones (the outer loop's only statement is the inner loop,
whose range does not depend on the outer variable) over a grid of one axis, not nested in a third; the kernel (and
the ``@triton.jit`` helpers it calls) reads ``tl.program_id`` / ``tl.num_programs`` only of literal axes, none of
them an axis the loops take (it was 0 / 1 before); the innermost body is the launch, optionally preceded by
aliases ``s = T[b, h]`` / ``s, p = T[b, h], U[b, h]`` whose names appear nowhere else in the function but as whole
arguments of the launch (they are inlined); the loop variables appear in the launch only inside whole slices
(never in the grid, in sizes, strides or other expressions); at least one slice.

The iterations run concurrently afterwards, so the kernel must not write memory that two iterations share: every
pointer it stores through (``tl.store``, ``tl.atomic_*``; its base parameter found by ``facts.pointer_bases``,
refused when it cannot be told) must be a slice moved by every loop variable ("kernel stores to row_max, which
every iteration shares: running iterations concurrently would race"), except a commutative atomic
(``atomic_add/max/min/and/or/xor``, its old value unused) into a buffer the kernel does not read, in a kernel that
calls no helper (the total is the same in any order, up to float rounding order); a helper that writes memory is
refused (its pointers are not followed); and no other argument may name the tensor a written slice comes from
(``T`` next to ``T[v]``, or ``T[h]`` next to ``T[b, h]``: another iteration's slice).

Loop counts above 65535 (the CUDA limit of grid axes 1 and 2) are refused when they are integer literals. A count
known only at run time is not checked (the transform did not check it before either): over the limit, CUDA
rejects the launch (``cuLaunchKernelEx`` fails, Triton's launcher raises "Triton Error [CUDA]: invalid
argument"), an error and never a wrong result, which validation at the problem's sizes reports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.kernel.flow import ATOMICS, bound_values, pointer_bases
from optimizer.rewrite.common import fresh, grid_node, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import CstKernel, arg_value, body_of, call_name, is_docstring, skip_ids, walk

__all__ = ["LaunchLoopGrid"]

_COMMUTATIVE = {"tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor"}
_MAX_AXIS = 65535  # CUDA: grid axes 1 and 2


@dataclass
class _Slice:
    base: str  # host text of the whole tensor
    dims: list[str]  # the loop variable indexing each leading dimension


def _loops(fn: cst.FunctionDef) -> list[cst.For]:
    return [n for n in walk(fn) if isinstance(n, cst.For)]


def _loop_var(loop: cst.For) -> tuple[str, str] | None:
    """``for v in range(n)`` -> (v, n text)."""
    it = loop.iter
    if (isinstance(loop.target, cst.Name) and isinstance(it, cst.Call) and isinstance(it.func, cst.Name)
            and it.func.value == "range" and len(it.args) == 1 and it.args[0].keyword is None):
        return loop.target.value, cst.Module([]).code_for_node(it.args[0].value)
    return None


def _uses(node: cst.CSTNode, names: list[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in walk(node))


def _slice_of(e: cst.BaseExpression, var: list[str]) -> tuple[cst.BaseExpression, list[str]] | None:
    """``T[b]``, ``T[b, h]``, ``T[b][h]`` (indices all loop variables, each once) -> (T, the variables by dimension)."""
    idx: list[str] = []
    while isinstance(e, cst.Subscript):
        names = [el.slice.value.value for el in e.slice if isinstance(el.slice, cst.Index)
                 and isinstance(el.slice.value, cst.Name) and el.slice.value.value in var]
        if len(names) != len(e.slice):
            return None
        idx, e = names + idx, e.value
    if not idx or len(set(idx)) != len(idx) or _uses(e, var):
        return None
    return e, idx


def _nest(t: Target) -> tuple[list[cst.For], list[tuple[str, str]], list[str]]:
    """The loops the launch runs in, outermost first (one, or a perfect nest of two), with their ``_loop_var``; or
    the reasons."""
    site = t.sites[0]
    if site.function is None or site.statement is None:
        return [], [], ["the launch is not inside a host loop"]
    around = sorted((f for f in _loops(site.function) if any(n is site.statement for n in walk(f.body))),
                    key=lambda f: -sum(1 for _ in walk(f)))  # outermost first
    if not around:
        return [], [], ["the launch is not inside a host loop"]
    found = [_loop_var(f) for f in around]
    heads = [lv for lv in found if lv is not None]
    names = [lv[0] if lv is not None else "?" for lv in found]
    if len(around) > 2:
        return [], [], [f"the loop over {names[-2]} is nested in another loop (at most two loops become grid axes)"]
    if len(heads) != len(around):
        return [], [], ["the loop is not `for v in range(n)`"]
    if len(around) == 2:
        outer, inner = around
        body = body_of(outer)
        if len(body) != 1 or body[0] is not inner or outer.orelse is not None:
            return [], [], [f"the loop over {names[0]} holds more than the loop over {names[1]} (a perfect nest is "
                            "needed)"]
        if names[0] == names[1] or _uses(inner.iter, [names[0]]):
            return [], [], [f"the range of the loop over {names[1]} depends on {names[0]} (not a rectangle)"]
    return around, heads, []


def _aliases(t: Target, body: Sequence[cst.CSTNode],
             var: list[str]) -> tuple[dict[str, cst.BaseExpression], list[str]]:
    """``s = T[b]`` / ``s, p = T[b], U[b]`` statements -> {alias: slice}, or the reasons they cannot be inlined."""
    out: dict[str, cst.BaseExpression] = {}
    assigns: list[cst.Assign] = []  # each statement's one assignment
    for s in body:
        small = s.body[0] if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 else None
        pairs = bound_values(small) if isinstance(small, cst.Assign) and len(small.targets) == 1 else []
        if isinstance(small, cst.Assign):
            assigns.append(small)
        if not pairs or any(v is None or _slice_of(v, var) is None for _, v in pairs):
            return {}, [f"the loop over {var[-1]} holds more than the launch: `{t.tree.code(s).splitlines()[0]}` "
                        f"(it would run once, not once per iteration; only aliases `s = T[{', '.join(var)}]` inline)"]
        for n, v in pairs:
            if n in out:
                return {}, [f"the alias {n} is bound twice in the loop"]
            assert v is not None  # tested above
            out[n] = v
    fn, call = t.sites[0].function, t.sites[0].call
    whole = {id(a.value) for a in call.args}
    skip = skip_ids(fn) if fn is not None else set()
    targets = {id(n) for a in assigns for n in walk(a.targets[0].target)}
    for m in walk(fn) if fn is not None else []:
        if isinstance(m, cst.Name) and m.value in out and id(m) not in skip | targets | whole:
            return {}, [f"the alias {m.value} is used other than as a whole argument of the launch (it cannot "
                        "be inlined)"]
    return out, []


def _helpers(t: Target) -> list[CstKernel]:
    """The ``@triton.jit`` functions the kernel calls, directly or through one another."""
    out: list[CstKernel] = []
    todo = [t.kernel]
    while todo:
        for c in walk(todo.pop().node.body):
            name = call_name(c) if isinstance(c, cst.Call) else ""
            if name in t.tree.kernels and name != t.kernel.name and all(h.name != name for h in out):
                out.append(t.tree.kernels[name])
                todo.append(t.tree.kernels[name])
    return out


def _root(text: str) -> str:
    """The variable a host expression starts from: ``out`` for ``out.view(-1)``, ``self.W`` for ``self.W[e]``."""
    m = re.match(r"(self\.)?[A-Za-z_]\w*", text)
    return m.group(0) if m else text


class LaunchLoopGrid:
    """One launch per host-loop iteration -> one launch whose last grid axes walk the iterations."""

    kind = "launch_loop_grid"
    card = "fuse-launches-for-launch-bound"

    def _plan(self, t: Target) -> tuple[list[str], dict[str, Any]]:
        out = single_site_reasons(t)
        if out:
            return out, {}
        site, lf = t.sites[0], t.launches[0]
        if len(lf.grid_elements or []) > 2:
            return [f"grid {lf.grid} already has three axes (the loop needs one)"], {}
        loops, heads, out = _nest(t)
        if out:
            return out, {}
        var, counts = [v for v, _ in heads], [n for _, n in heads]
        elems = len(lf.grid_elements or [])
        if elems + len(loops) > 3:
            return [f"grid {lf.grid} has {elems} axes and the loops over {', '.join(var)} need {len(loops)} more "
                    "(a grid has at most three)"], {}
        axes = list(range(elems, elems + len(loops)))
        for v, n in zip(var, counts, strict=True):
            if n.isdigit() and int(n) > _MAX_AXIS:
                return [f"the loop over {v} has {n} iterations, over the CUDA limit of {_MAX_AXIS} on grid axes 1 "
                        "and 2"], {}
        for c in (c for k in [t.kernel, *_helpers(t)] for c in walk(k.node)):
            if isinstance(c, cst.Call) and call_name(c) in ("tl.program_id", "tl.num_programs"):
                ax = arg_value(c, "axis", 0)
                if not isinstance(ax, cst.Integer) or int(ax.value) in axes:
                    return [f"the kernel reads {t.tree.code(c)}, an axis the loops would take"], {}
        inner = loops[-1]
        body = body_of(inner)
        at = next((i for i, s in enumerate(body) if s is site.statement), None)
        if at is None or inner.orelse is not None:
            return [f"the loop over {var[-1]} holds more than the launch (its other statements would run once, not "
                    f"once per iteration)"], {}
        if body[-1] is not site.statement:
            after = t.tree.code(body[at + 1]).splitlines()[0]
            return [f"the loop over {var[-1]} holds more than the launch: `{after}` follows it (it would run once, "
                    "not once per iteration)"], {}
        aliases, out = _aliases(t, body[:-1], var)
        if out:
            return out, {}
        if _uses(site.call.func, var):
            return [f"the grid depends on {' / '.join(var)}"], {}
        sliced: dict[str, _Slice] = {}
        args: dict[str, str] = {}  # parameter -> host text (aliases inlined)
        for i, a in enumerate(site.call.args):
            pos = t.kernel.params[i] if i < len(t.kernel.params) else None
            param = a.keyword.value if a.keyword is not None else pos
            value = aliases.get(a.value.value, a.value) if isinstance(a.value, cst.Name) else a.value
            if param is not None:
                args[param] = t.tree.code(value)
            if not _uses(value, var):
                continue
            sl = _slice_of(value, var)
            if sl is None or param is None or param in t.kernel.constexprs:
                return [f"{' / '.join(var)} is used in the argument {t.tree.code(value)} other than as a whole slice "
                        f"T[{', '.join(var)}]"], {}
            sliced[param] = _Slice(t.tree.code(sl[0]), sl[1])
        if not sliced:
            return [f"no argument is sliced by {' / '.join(var)}"], {}
        out = self._races(t, var, sliced, args)
        return out, {"loops": loops, "var": var, "counts": counts, "axes": axes, "sliced": sliced,
                     "aliases": aliases}

    def _races(self, t: Target, var: list[str], sliced: dict[str, _Slice], args: dict[str, str]) -> list[str]:
        """Reasons the iterations, once concurrent, would write memory another iteration reads or writes."""
        k, out, helpers = t.kernel, [], _helpers(t)
        for h in helpers:
            if any(isinstance(c, cst.Call) and (call_name(c) == "tl.store" or call_name(c) in ATOMICS)
                   for c in walk(h.node)):
                out.append(f"{k.name} calls {h.name}, which writes memory (its pointers are not followed: a race "
                           "between iterations cannot be ruled out)")
        loaded = set().union(*(pointer_bases(k, arg_value(a.node, "pointer", 0))
                               for a in t.facts.accesses if a.op == "tl.load"))
        statements = {id(s.value) for s in walk(k.node) if isinstance(s, cst.Expr)}
        written: set[str] = set()
        for a in t.facts.accesses:
            if a.op != "tl.store" and a.op not in ATOMICS:
                continue
            bases = pointer_bases(k, arg_value(a.node, "pointer", 0))
            if not bases:
                out.append(f"cannot tell which argument {a.op}({a.pointer}, ...) writes through")
            for p in sorted(bases):
                if p in sliced and set(sliced[p].dims) == set(var):
                    written.add(p)
                elif (a.op in _COMMUTATIVE and id(a.node) in statements and p not in loaded | set(sliced)
                      and not helpers):
                    continue  # an order-free accumulation into a buffer the kernel never reads
                elif p in sliced:
                    out.append(f"{k.name} stores to {p} ({args.get(p)}), which moves with {', '.join(sliced[p].dims)} "
                               f"only: the iterations over the other loop would race")
                else:
                    out.append(f"{k.name} stores to {p} ({args.get(p)}), which every iteration shares: running "
                               "iterations concurrently would race")
        for p in sorted(written):
            root = _root(sliced[p].base)
            for q, text in args.items():
                same = q in sliced and sliced[q] == sliced[p]
                if q != p and not same and re.match(rf"{re.escape(root)}\b", text):
                    out.append(f"{k.name} writes {args[p]} through {p} and {q} gets {text}, which may overlap "
                               "another iteration's slice")
        return list(dict.fromkeys(out))

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return self._plan(t)[0]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        _, plan = self._plan(t)
        return [{"axis": plan["axes"][0]} if len(plan["axes"]) == 1 else {"axis": plan["axes"][0], "loops": 2}]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        _, plan = self._plan(t)
        tree, k, site = t.tree, t.kernel, t.sites[0]
        var, counts, axes, sliced = plan["var"], plan["counts"], plan["axes"], plan["sliced"]
        nest = len(var) > 1
        its = {v: fresh(t, f"loop_{v}" if nest else "loop_it") for v in var}
        strides = {(p, v): fresh(t, f"{p}_loop_stride_{v}" if nest else f"{p}_loop_stride")
                   for p, s in sliced.items() for v in s.dims}
        prologue = "".join(f"{its[v]} = tl.program_id({ax}).to(tl.int64)\n" for v, ax in zip(var, axes, strict=True))
        prologue += "".join(f"{p} = {p} + " + " + ".join(f"{its[v]} * {strides[p, v]}" for v in s.dims) + "\n"
                            for p, s in sliced.items())
        first = k.node.body.body[0]
        (tree.insert_after if is_docstring(first) else tree.insert_before)(first, prologue)
        tree.add_params(k.node, list(strides.values()))
        for a in site.call.args:
            value = plan["aliases"].get(a.value.value, a.value) if isinstance(a.value, cst.Name) else a.value
            if _uses(value, var):
                sl = _slice_of(value, var)
                assert sl is not None  # _plan: an argument using the loop variables is a whole slice T[v]
                tree.replace(a.value, tree.code(sl[0]))
        for (p, v), name in strides.items():
            tree.add_keyword(site.call, name, f"{sliced[p].base}.stride({sliced[p].dims.index(v)})")
        for s in plan["loops"][-1].body.body[:-1]:  # the inlined aliases
            tree.remove(s)
        elems = t.launches[0].grid_elements or []
        tree.replace(grid_node(site, tree), "(" + ", ".join([*elems, *counts]) + ",)")
        for loop in plan["loops"]:
            tree.unwrap(loop)
        inlined = f" (aliases {', '.join(plan['aliases'])} inlined)" if plan["aliases"] else ""
        if not nest:
            v, n, ax = var[0], counts[0], axes[0]
            return (f"{k.name}: {n} launches from `for {v} in range({n})` -> one launch, grid axis {ax} walks {v}; "
                    f"{', '.join(sliced)} move to their slice by tl.program_id({ax}) x the slice stride{inlined}")
        return (f"{k.name}: {' x '.join(counts)} launches from `for {var[0]} in range({counts[0]})` / `for {var[1]} in "
                f"range({counts[1]})` -> one launch, grid axes {axes[0]} and {axes[1]} walk {var[0]} and {var[1]}; "
                f"{', '.join(sliced)} move to their slice by the program ids x the slice strides{inlined}")
