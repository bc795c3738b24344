"""``row_resident``: several loops over the same row chunks -> one register-resident row (card
``fused-softmax-row-in-registers``).

A naive row kernel walks its row once per statistic and once more to write (mean, variance, normalize; max,
sum-of-exp, divide), loading the same chunks every time::

    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        total += tl.sum(x, axis=0)
    ...
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, (x - mean) * rstd, mask=cols < n_cols)

When ``BLOCK`` covers the row every loop runs once, so the loops become straight-line code and the repeated loads
one load: a copy of the kernel, ``<name>_rows``, loads the chunk once (``x_rows0 = tl.load(ptr, mask=M)``) and
each former load becomes ``tl.where(M_i, x_rows0, other_i)`` -- the same values, with each site's own ``other``
for masked lanes. The host launches the copy with ``BLOCK = triton.next_power_of_2(n)`` (4-16 warps) for rows up
to ``LIMIT`` elements and the original kernel above it, so no case loses its loop form::

    if N <= 8192:
        k_rows[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N), num_warps=min(16, max(4, triton.next_power_of_2(N) // 512)))
    else:
        k[(M,)](x, y, N, BLOCK=256)

Domain: every loop of the kernel is a top-level ``for v in range(0, n, B)`` with the same ``n`` (a parameter)
and constexpr ``B``, at least two of them, none nested; one launch site that is a statement of its own, passing
``B`` as a keyword; a later load is shared only when its pointer text is the first load's, every name the pointer
and mask read is defined by the same statement text in its loop (or not rebound at all), and its mask is the
first one's or ``first & extra``; no store or atomic writes through that pointer's base. Refused otherwise, with
each reason. ``LIMIT`` is the round's parameter (8192, 16384, 4096 elements timed together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.recipes.base import RecipeContext
from optimizer.rewrite.common import fresh, single_site_reasons
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import Tree, arg_value, call_name, walk

__all__ = ["RowResident"]

_WRITES = ("tl.store", "tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas",
           "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor")


@dataclass
class _Plan:
    loops: list[cst.For]
    var: str
    bound: str  # the kernel parameter the loops run to
    block: str  # the constexpr step
    host_bound: str  # the host expression passed for ``bound``


def _header(loop: cst.For, code: Any) -> tuple[str, str, str] | None:
    """(var, bound, step) of ``for var in range(0, bound, step)``."""
    it = loop.iter
    if not (isinstance(loop.target, cst.Name) and isinstance(it, cst.Call) and call_name(it) in ("range", "tl.range")
            and len(it.args) == 3 and code(it.args[0].value) == "0"):
        return None
    return loop.target.value, code(it.args[1].value), code(it.args[2].value)


def _assigns(stmts: list[cst.CSTNode]) -> dict[str, str]:
    """name -> text of the value of its (last) simple assignment among ``stmts``."""
    out = {}
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign):
            a = s.body[0]
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                out[a.targets[0].target.value] = cst.Module([]).code_for_node(a.value).strip()
    return out


def _resolved(e: cst.BaseExpression | None, defs: dict[str, str], code: Any) -> str:
    """The text of a mask, a name defined earlier in its loop replaced by its definition (``mask`` -> ``cols < n``)."""
    if e is None:
        return ""
    if isinstance(e, cst.Name) and e.value in defs:
        return defs[e.value]
    return code(e)


def _plan(t: Target) -> tuple[_Plan | None, list[str]]:
    code, k = t.tree.code, t.kernel
    bad = single_site_reasons(t)
    if t.facts.dots:
        bad.append("has tl.dot")
    body = list(k.node.body.body)  # type: ignore[attr-defined]
    loops = [s for s in body if isinstance(s, cst.For)]
    every = [n for n in walk(k.node) if isinstance(n, (cst.For, cst.While))]
    if len(every) != len(loops):
        bad.append("a nested loop or a while loop (only top-level row loops are made resident)")
    if len(loops) < 2:
        return None, [*bad, f"{len(loops)} top-level row loop(s): nothing is loaded twice"]
    heads = {_header(lp, code) for lp in loops}
    if len(heads) != 1 or None in heads:
        return None, [*bad, "the loops are not all `for v in range(0, n, BLOCK)` with one n and one BLOCK"]
    var, bound, block = next(iter(heads))  # type: ignore[misc]
    if block not in k.constexprs:
        bad.append(f"the loop step {block} is not a constexpr parameter")
    if bound not in k.params:
        bad.append(f"the loop bound {bound} is not a kernel parameter")
    host = None
    if not bad:
        site = t.sites[0]
        if site.keyword(block) is None:
            bad.append(f"the launch does not pass {block} as a keyword")
        arg = site.arg_for(k, bound)
        host = code(arg) if arg is not None else None
        if host is None:
            bad.append(f"the launch does not pass {bound}")
        stmt = site.statement
        if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
                and stmt.body[0].value is site.call):
            bad.append("the launch is not a statement of its own (its result is used)")
    if bad:
        return None, bad
    return _Plan(loops, var, bound, block, host or ""), []


def _loads(loop: cst.For) -> list[tuple[cst.CSTNode, cst.Call]]:
    """(top-level statement, tl.load call) for every load in the loop's body, in order."""
    out = []
    for s in loop.body.body:  # type: ignore[attr-defined]
        for n in walk(s):
            if isinstance(n, cst.Call) and call_name(n) == "tl.load":
                out.append((s, n))
    return out


def _base(ptr: cst.BaseExpression) -> str:
    """The leftmost name of a pointer expression (``x_ptr`` in ``x_ptr + row * n + cols``)."""
    while isinstance(ptr, cst.BinaryOperation):
        ptr = ptr.left
    return ptr.value if isinstance(ptr, cst.Name) else ""


def _shared(t: Target, plan: _Plan) -> list[tuple[cst.Call, cst.Call, list[str]]]:
    """(first load, later load, []) pairs a single load can serve; pairs that cannot are left out."""
    code = t.tree.code
    written = {_base(arg_value(n, "pointer", 0)) for n in walk(t.kernel.node)  # type: ignore[arg-type]
               if isinstance(n, cst.Call) and call_name(n) in _WRITES and arg_value(n, "pointer", 0) is not None}
    top = list(t.kernel.node.body.body)  # type: ignore[attr-defined]
    out = []
    first_loads: dict[str, tuple[int, cst.CSTNode, cst.Call]] = {}
    for li, loop in enumerate(plan.loops):
        body = list(loop.body.body)  # type: ignore[attr-defined]
        for stmt, ld in _loads(loop):
            ptr = arg_value(ld, "pointer", 0)
            if ptr is None or _base(ptr) in written:
                continue
            key = code(ptr)
            if key not in first_loads:
                first_loads[key] = (li, stmt, ld)
                continue
            fi, fstmt, first = first_loads[key]
            fbody = list(plan.loops[fi].body.body)  # type: ignore[attr-defined]
            before1 = _assigns(fbody[:fbody.index(fstmt)])
            before2 = _assigns(body[:body.index(stmt)])
            m1 = _resolved(arg_value(first, "mask", 1), before1, code)
            m2node = arg_value(ld, "mask", 1)
            m2 = _resolved(m2node, before2, code)
            if bool(m1) != bool(m2):
                continue
            if m2 != m1:
                parts = ([code(m2node.left).strip("()"), code(m2node.right).strip("()")]  # type: ignore[union-attr]
                         if isinstance(m2node, cst.BinaryOperation) and isinstance(m2node.operator, cst.BitAnd) else [])
                if not any(p == m1 or _resolved(cst.Name(p), before2, code) == m1 for p in parts if p.isidentifier() or p == m1):
                    continue
            # the names the pointer and the first mask read: defined alike in both loops, or never rebound
            m1node = arg_value(first, "mask", 1)
            names = {n.value for e in (ptr, m1node) if e is not None for n in walk(e) if isinstance(n, cst.Name)}
            names |= {n.value for d in (before1.get(x) for x in list(names)) if d for n in walk(cst.parse_expression(d))
                      if isinstance(n, cst.Name)}
            between = top[top.index(plan.loops[fi]):top.index(loop)]
            rebound = set(_assigns([s for s in between if not isinstance(s, cst.For)]))
            inner = {n for lp in plan.loops for n in _assigns(list(lp.body.body))}  # type: ignore[attr-defined]
            if any(before1.get(n) != before2.get(n) for n in names if n in inner) or names & (rebound - {plan.var}):
                continue
            out.append((first, ld, []))
    return out


class RowResident:
    """Repeated loops over one row -> a copy of the kernel that loads the row once, launched when it fits."""

    kind = "row_resident"
    card = "fused-softmax-row-in-registers"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan, bad = _plan(t)
        if plan is not None and not _shared(t, plan):
            bad = ["no load is repeated in a later loop with the same pointer and a compatible mask"]
        return bad

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"LIMIT": int(v)} for v in (params.get("values") or [8192, 16384, 4096])]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = _plan(t)
        assert plan is not None
        code, k = t.tree.code, t.kernel
        new_name = fresh(t, f"{k.name}_rows")
        text = t.tree.module.code_for_node(k.node).replace(f"def {k.name}(", f"def {new_name}(", 1)
        sub = Tree("import triton\nimport triton.language as tl\n\n\n" + text.lstrip("\n"))
        sk = sub.kernels[new_name]
        st = Target(sub, sk, t.facts, [], [])
        splan, _ = _plan_loops_only(st)
        pairs = _shared(st, splan)
        raws: dict[int, str] = {}
        for first, later, _ in pairs:
            if id(first) not in raws:
                raws[id(first)] = fresh(st, f"row_vals{len(raws)}")
                stmt = sub.statement_of(sk.node, first)
                ptr, mask = arg_value(first, "pointer", 0), arg_value(first, "mask", 1)
                load = f"tl.load({sub.code(ptr)}" + (f", mask={sub.code(mask)})" if mask is not None else ")")  # type: ignore[arg-type]
                sub.insert_before(stmt, f"{raws[id(first)]} = {load}\n")  # type: ignore[arg-type]
                _use(sub, first, raws[id(first)])
            _use(sub, later, raws[id(first)])
        for lp in splan.loops:
            sub.unwrap(lp, f"{splan.var} = 0\n")
        rendered = sub.render().split("\n", 4)[4]
        t.tree.insert_after(k.node, "\n\n" + rendered)
        site = t.sites[0]
        call_text = code(site.call)
        nb = f"triton.next_power_of_2({plan.host_bound})"
        fast = cst.ensure_type(cst.parse_expression(call_text), cst.Call)
        fast = fast.with_changes(func=fast.func.with_changes(value=cst.Name(new_name)))  # type: ignore[attr-defined]
        args = [a for a in fast.args if not (a.keyword is not None and a.keyword.value in (plan.block, "num_warps"))]
        extra = cst.ensure_type(cst.parse_expression(f"f({plan.block}={nb}, num_warps=min(16, max(4, {nb} // 512)))"), cst.Call).args
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fast = fast.with_changes(args=[*args, *extra])
        limit = int(point["LIMIT"])
        stmt_text = (f"if {plan.host_bound} <= {limit}:\n    {cst.Module([]).code_for_node(fast)}\nelse:\n    {call_text}\n")
        t.tree.insert_before(site.statement, stmt_text)  # type: ignore[arg-type]
        t.tree.remove(site.statement)  # type: ignore[arg-type]
        return (f"{k.name}: {len(plan.loops)} loops over one row -> {new_name}, the row loaded once and kept in registers "
                f"({len(pairs)} repeated load(s) served by {len(raws)}), launched with {plan.block} = next_power_of_2"
                f"({plan.host_bound}) when {plan.host_bound} <= {limit}; the original kernel above")


def _plan_loops_only(t: Target) -> tuple[_Plan, list[str]]:
    """The loop plan of the kernel copy (it has no launch of its own)."""
    code, k = t.tree.code, t.kernel
    loops = [s for s in k.node.body.body if isinstance(s, cst.For)]  # type: ignore[attr-defined]
    var, bound, block = _header(loops[0], code)  # type: ignore[misc]
    return _Plan(loops, var, bound, block, ""), []


def _use(tree: Tree, load: cst.Call, raw: str) -> None:
    """``tl.load(p, mask=m, other=o)`` -> ``tl.where(m, raw, o)`` (``raw`` when the load has no mask or no other)."""
    mask, other = arg_value(load, "mask", 1), arg_value(load, "other", 2)
    if mask is None or other is None:
        tree.replace(load, raw)
    else:
        tree.replace(load, f"tl.where({tree.code(mask)}, {raw}, {tree.code(other)})")
