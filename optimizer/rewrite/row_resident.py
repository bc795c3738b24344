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
        k_rows[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N),
                     num_warps=min(16, max(4, triton.next_power_of_2(N) // 512)))
    else:
        k[(M,)](x, y, N, BLOCK=256)

Domain: every loop of the kernel is a top-level ``for v in range(0, n, B)`` over the same ``n`` (a parameter),
each stepping by a constexpr (loops fused from several kernels may have their own, ``BLOCK`` and ``BLOCK_2``: all
become ``next_power_of_2(n)``), at least two loops, none nested; one launch site that is a statement of its own,
passing every step as a keyword. A later load is shared when its address equals the first one's in a canonical
form (names defined earlier in the loop replaced by their definitions, the loop variable by 0, every step by one
token, ``+``/``*``/``&`` operands sorted: ``x_ptr + row * n + cols`` and ``x_ptr + offs`` with ``offs = row * n +
cols`` match), its mask is the first one's or the first one and-ed with more, the names they read are not rebound
between the loops, and no store or atomic writes through that base. Refused otherwise, with each reason. ``LIMIT``
is the round's parameter (8192, 16384, 4096 elements timed together).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.rewrite.common import call_arg, fresh, launch_statement, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import Tree, arg_value, body_of, call_name, range_args, walk

__all__ = ["RowResident"]

_WRITES = ("tl.store", "tl.atomic_add", "tl.atomic_max", "tl.atomic_min", "tl.atomic_xchg", "tl.atomic_cas",
           "tl.atomic_and", "tl.atomic_or", "tl.atomic_xor")


@dataclass
class _Plan:
    loops: list[cst.For]
    vars: list[str]  # each loop's variable
    bound: str  # the kernel parameter the loops run to
    blocks: list[str]  # the constexpr steps (one per distinct name; all become next_power_of_2(n))
    host_bound: str  # the host expression passed for ``bound``

    @property
    def block(self) -> str:
        return self.blocks[0]


def _header(loop: cst.For, code: Any) -> tuple[str, str, str] | None:
    """(var, bound, step) of ``for var in range(0, bound, step)``."""
    args = range_args(loop.iter)
    if not (isinstance(loop.target, cst.Name) and len(args) == 3 and code(args[0].value) == "0"):
        return None
    return loop.target.value, code(args[1].value), code(args[2].value)


def _headers(loops: Sequence[cst.For], code: Any) -> list[tuple[str, str, str]] | None:
    """The ``_header`` of every loop, or None when some loop has none."""
    found = [_header(lp, code) for lp in loops]
    heads = [h for h in found if h is not None]
    return heads if len(heads) == len(found) else None


def _assigns(stmts: Sequence[cst.CSTNode]) -> dict[str, str]:
    """name -> text of the value of its (last) simple assignment among ``stmts``."""
    out = {}
    for s in stmts:
        if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign):
            a = s.body[0]
            if len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
                out[a.targets[0].target.value] = cst.Module([]).code_for_node(a.value).strip()
    return out


def _plan(t: Target) -> tuple[_Plan | None, list[str]]:
    code, k = t.tree.code, t.kernel
    bad = single_site_reasons(t)
    if t.facts.dots:
        bad.append("has tl.dot")
    body = body_of(k.node)
    loops = [s for s in body if isinstance(s, cst.For)]
    every = [n for n in walk(k.node) if isinstance(n, (cst.For, cst.While))]
    if len(every) != len(loops):
        bad.append("a nested loop or a while loop (only top-level row loops are made resident)")
    if len(loops) < 2:
        return None, [*bad, f"{len(loops)} top-level row loop(s): nothing is loaded twice"]
    heads = _headers(loops, code)
    if heads is None or len({h[1] for h in heads}) != 1:
        return None, [*bad, "the loops are not all `for v in range(0, n, BLOCK)` over one n"]
    bound = heads[0][1]
    blocks = list(dict.fromkeys(h[2] for h in heads))
    bad += [f"the loop step {b} is not a constexpr parameter" for b in blocks if b not in k.constexprs]
    if bound not in k.params:
        bad.append(f"the loop bound {bound} is not a kernel parameter")
    host = None
    if not bad:
        site = t.sites[0]
        bad += [f"the launch does not pass {b} as a keyword" for b in blocks if site.keyword(b) is None]
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
    return _Plan(loops, [h[0] for h in heads], bound, blocks, host or ""), []


def _loads(loop: cst.For) -> list[tuple[cst.BaseStatement, cst.Call]]:
    """(top-level statement, tl.load call) for every load in the loop's body, in order."""
    out = []
    for s in body_of(loop):
        for n in walk(s):
            if isinstance(n, cst.Call) and call_name(n) == "tl.load":
                out.append((s, n))
    return out


def _base(ptr: cst.BaseExpression) -> str:
    """The leftmost name of a pointer expression (``x_ptr`` in ``x_ptr + row * n + cols``)."""
    while isinstance(ptr, cst.BinaryOperation):
        ptr = ptr.left
    return ptr.value if isinstance(ptr, cst.Name) else ""


def _canon(e: cst.BaseExpression | None, defs: dict[str, str], zero: set[str], steps: set[str], depth: int = 0) -> str:
    """A canonical text of an address or mask: names defined earlier in the loop replaced by their definitions, the
    loop variable by 0 (each loop runs once), every step constexpr by one token (all become next_power_of_2(n)),
    and the operands of ``+`` / ``*`` / ``&`` chains sorted, so ``x + row * n + cols`` and ``x + offs`` with
    ``offs = row * n + cols`` compare equal."""
    if e is None:
        return ""

    class _Expand(ast.NodeTransformer):
        def __init__(self, d: int) -> None:
            self.d = d

        def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802 (ast visitor name)
            if node.id in zero:
                return ast.Constant(0)
            if node.id in steps:
                return ast.Name("__STEP__")
            if node.id in defs and self.d < 6:
                return _Expand(self.d + 1).visit(ast.parse(defs[node.id], mode="eval").body)
            return node

    def field(v: object) -> object:
        if isinstance(v, ast.AST):
            return go(v)
        if isinstance(v, list):
            return [go(x) if isinstance(x, ast.AST) else x for x in v]
        return v

    def go(node: ast.AST) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult, ast.BitAnd)):
            kind = type(node.op)
            terms: list[str] = []

            def flat(n: ast.AST) -> None:
                if isinstance(n, ast.BinOp) and isinstance(n.op, kind):
                    flat(n.left)
                    flat(n.right)
                else:
                    terms.append(go(n))
            flat(node)
            terms = [x for x in terms if not (kind is ast.Add and x == "Constant(value=0,kind=None)")]
            return f"{kind.__name__}(" + ",".join(sorted(terms)) + ")" if len(terms) != 1 else terms[0]
        parts = [f"{k}={field(v)}" for k, v in ast.iter_fields(node) if k != "ctx"]
        return f"{type(node).__name__}({','.join(parts)})"

    return go(_Expand(depth).visit(ast.parse(cst.Module([]).code_for_node(e).strip(), mode="eval").body))


def _flat(t: Target, node: cst.CSTNode) -> str:
    return " ".join(t.tree.code(node).split())


def _shared(t: Target, plan: _Plan, why: list[str] | None = None) -> list[tuple[cst.Call, cst.Call, list[str]]]:
    """(first load, later load, []) pairs a single load can serve; pairs that cannot are left out (``why`` collects
    the reason for each load left out)."""
    why = [] if why is None else why
    written = {_base(wp) for n in walk(t.kernel.node) if isinstance(n, cst.Call) and call_name(n) in _WRITES
               and (wp := arg_value(n, "pointer", 0)) is not None}
    top = body_of(t.kernel.node)
    zero, steps = set(plan.vars), set(plan.blocks)
    out: list[tuple[cst.Call, cst.Call, list[str]]] = []
    first_loads: dict[str, tuple[int, cst.CSTNode, cst.Call, str]] = {}
    for li, loop in enumerate(plan.loops):
        body = body_of(loop)
        for stmt, ld in _loads(loop):
            ptr = arg_value(ld, "pointer", 0)
            if ptr is None or _base(ptr) in written:
                if ptr is not None:
                    why.append(f"`{_flat(t, ld)}` reads through {_base(ptr)}, which the kernel also writes (a "
                               "load kept from an earlier loop could miss a store)")
                continue
            defs = _assigns(body[:body.index(stmt)])
            key = _canon(ptr, defs, zero, steps)
            mask = _canon(arg_value(ld, "mask", 1), defs, zero, steps)
            if key not in first_loads:
                first_loads[key] = (li, stmt, ld, mask)
                continue
            fi, _fstmt, first, m1 = first_loads[key]
            # the later mask is the first one, or the first one and-ed with more (a subset of the loaded lanes)
            if bool(m1) != bool(mask) or (
                mask != m1 and not (mask.startswith("BitAnd(") and m1 in _and_terms(mask, m1))
            ):
                why.append(f"`{_flat(t, ld)}` repeats an earlier load with a mask that is not the first one's")
                continue
            # the free names the address and mask read (after the in-loop definitions): never rebound between the loops
            free = {n for n in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", key + m1) if n in _names_of(t.kernel.node)}
            between = top[top.index(plan.loops[fi]):top.index(loop)]
            rebound = set(_assigns([s for s in between if not isinstance(s, cst.For)]))
            if free & rebound:
                why.append(f"`{_flat(t, ld)}`: {', '.join(sorted(free & rebound))} rebound between the loops")
                continue
            out.append((first, ld, []))
    return out


def _and_terms(mask: str, m1: str) -> list[str]:
    """The operands of a canonical ``BitAnd(...)`` (m1 may itself be one operand, or an and-chain of several)."""
    inner = mask[len("BitAnd("):-1]
    terms, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    terms.append(cur)
    if m1.startswith("BitAnd("):
        sub = _and_terms(m1, "")
        return [m1] if all(x in terms for x in sub) else terms
    return terms


def _names_of(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


class RowResident:
    """Repeated loops over one row -> a copy of the kernel that loads the row once, launched when it fits."""

    kind = "row_resident"
    card = "fused-softmax-row-in-registers"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan, bad = _plan(t)
        why: list[str] = []
        if plan is not None and not _shared(t, plan, why):
            bad = ["no load is repeated in a later loop with the same pointer and a compatible mask"
                   + (f" ({'; '.join(dict.fromkeys(why))})" if why else "")]
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
                stmt = sub.enclosing_statement(sk.node, first)
                ptr = call_arg(first, "pointer", 0)  # _shared pairs loads with a pointer only
                mask = arg_value(first, "mask", 1)
                load = f"tl.load({sub.code(ptr)}" + (f", mask={sub.code(mask)})" if mask is not None else ")")
                sub.insert_before(stmt, f"{raws[id(first)]} = {load}\n")
                _use(sub, first, raws[id(first)])
            _use(sub, later, raws[id(first)])
        for lp, var in zip(splan.loops, splan.vars, strict=True):
            sub.unwrap(lp, f"{var} = 0\n")
        rendered = sub.render().split("\n", 4)[4]
        t.tree.insert_after(k.node, "\n\n" + rendered)
        site = t.sites[0]
        call_text = code(site.call)
        nb = f"triton.next_power_of_2({plan.host_bound})"
        fast = cst.ensure_type(cst.parse_expression(call_text), cst.Call)
        fast = fast.with_changes(func=fast.func.with_changes(value=cst.Name(new_name)))
        args = [a for a in fast.args if not (a.keyword is not None and a.keyword.value in (*plan.blocks, "num_warps"))]
        steps = "".join(f"{b}={nb}, " for b in plan.blocks)
        extra = cst.ensure_type(
            cst.parse_expression(f"f({steps}num_warps=min(16, max(4, {nb} // 512)))"), cst.Call
        ).args
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        fast = fast.with_changes(args=[*args, *extra])
        limit = int(point["LIMIT"])
        stmt_text = (
            f"if {plan.host_bound} <= {limit}:\n    {cst.Module([]).code_for_node(fast)}\nelse:\n    {call_text}\n"
        )
        stmt = launch_statement(site)  # _plan: the launch is a statement of its own
        t.tree.insert_before(stmt, stmt_text)
        t.tree.remove(stmt)
        return (
            f"{k.name}: {len(plan.loops)} loops over one row -> {new_name}, the row loaded once and kept in registers "
            f"({len(pairs)} repeated load(s) served by {len(raws)}), "
            f"launched with {' = '.join(plan.blocks)} = next_power_of_2"
            f"({plan.host_bound}) when {plan.host_bound} <= {limit}; the original kernel above"
        )


def _plan_loops_only(t: Target) -> tuple[_Plan, list[str]]:
    """The loop plan of the kernel copy (it has no launch of its own)."""
    code, k = t.tree.code, t.kernel
    loops = [s for s in k.node.body.body if isinstance(s, cst.For)]
    heads = _headers(loops, code)
    assert heads, "a copy of the kernel whose loops _plan found (all `for v in range(0, n, BLOCK)`, at least two)"
    return _Plan(loops, [h[0] for h in heads], heads[0][1], list(dict.fromkeys(h[2] for h in heads)), ""), []


def _use(tree: Tree, load: cst.Call, raw: str) -> None:
    """``tl.load(p, mask=m, other=o)`` -> ``tl.where(m, raw, o)`` (``raw`` when the load has no mask or no other)."""
    mask, other = arg_value(load, "mask", 1), arg_value(load, "other", 2)
    if mask is None or other is None:
        tree.replace(load, raw)
    else:
        tree.replace(load, f"tl.where({tree.code(mask)}, {raw}, {tree.code(other)})")
