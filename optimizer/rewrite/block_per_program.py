"""``block_per_program``: one program per element becomes one program per BLOCK tile (card ``block-per-program``).

Domain: a kernel whose only program id is ``pid = tl.program_id(0)``, used as an element index, with no
``tl.arange`` (feature ``no_block_range``), no reduction and no ``tl.dot``, launched from one place with a
tuple grid ``(n,)``. Before::

    pid = tl.program_id(0)
    if pid >= n:
        return
    x = tl.load(X + pid)
    tl.store(Y + pid, x * 2)

After (1-D form)::

    pid = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    block_ok = pid < n_elems_bpp
    block_ok = block_ok & (pid < n)
    x = tl.load(X + pid, mask=block_ok)
    tl.store(Y + pid, x * 2, mask=block_ok)
    # host: kernel[(triton.cdiv(n, BLOCK_SIZE),)](..., n_elems_bpp=n, BLOCK_SIZE=1024)

When the index is only split as ``pid // D`` and ``pid % D`` (feature ``div_mod_index``: a row and a column),
the 2-D form removes the per-element division: ``row = tl.program_id(0)``, ``col = tl.program_id(1) * BLOCK +
tl.arange(0, BLOCK)`` on a grid ``(cdiv(n, D), cdiv(D, BLOCK))``, and ``pid // D`` / ``pid % D`` become
``row`` / ``col``. Its first point sizes BLOCK on the host for each call (``min(1024, next_power_of_2(D))``, so a
256-wide and a 768-wide case each get one full tile per row), the next ones are fixed sizes around the recorded D.
Where the launch named ``num_warps`` (chosen for one element per program) the warps follow the tile: about 128
elements per warp, 1 to 8.

Guards become masks: ``if <pid condition>: return`` and an ``if <pid condition>:`` around the rest of the body.
Scalar accumulators carried around a loop (``acc = 0.0`` then ``acc += ...`` in a K loop) become
``tl.full([BLOCK], 0.0, tl.float32)``. Refused, with the reason: other branches or loops whose condition depends
on the program id, stores or atomics to one address from every program (see ``two_stage_reduction``), a second
program axis, reductions and dots. A point that leaves a recorded case below one program per SM (or shrinks a
grid already below it) is dropped by the grid-fill guard (``grid_fill``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import libcst as cst

from optimizer.kernel.flow import ATOMICS, dependents
from optimizer.kernel.flow import names as _names
from optimizer.rewrite.common import (
    and_mask,
    fresh,
    grid_node,
    host_arg_text,
    launch_record,
    launch_statement,
    single_site_reasons,
)
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.grid_fill import shrunk
from optimizer.rewrite.tree import arg_value, body_of, call_name, walk

__all__ = ["BlockPerProgram"]

_CMP_INVERSE = {cst.LessThan: ">=", cst.GreaterThanEqual: "<", cst.GreaterThan: "<=", cst.LessThanEqual: ">",
                cst.Equal: "!=", cst.NotEqual: "=="}


def _top(t: Target) -> list[cst.BaseStatement]:
    return body_of(t.kernel.node)


def _pid_line(t: Target) -> cst.SimpleStatementLine | None:
    var = t.facts.pid.get(0)
    for s in _top(t):
        if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign):
            a = s.body[0]
            if (
                isinstance(a.targets[0].target, cst.Name)
                and a.targets[0].target.value == var
                and call_name(a.value) == "tl.program_id"
            ):
                return s
    return None


def _is_return(block: cst.BaseSuite) -> bool:
    body = getattr(block, "body", [])
    return (len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine)
            and isinstance(body[0].body[0], cst.Return) and body[0].body[0].value is None)


def _guards(t: Target) -> tuple[list[cst.If], cst.If | None, list[str]]:
    """Top-level ``if C: return`` guards, a final ``if C:`` wrapping the rest, and the ifs that cannot become masks."""
    dep = t.facts.pid_dependent
    top = _top(t)
    returns, wrap, bad = [], None, []
    for i, s in enumerate(top):
        if isinstance(s, cst.If) and _names(s.test) & dep:
            if s.orelse is None and _is_return(s.body):
                returns.append(s)
            elif s.orelse is None and i == len(top) - 1:
                wrap = s
    allowed = {id(s) for s in returns} | ({id(wrap)} if wrap is not None else set())
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.If) and id(n) not in allowed and _names(n.test) & dep:
            bad.append(f"branch `if {t.tree.code(n.test)}` depends on the program id (a vector condition)")
        if isinstance(n, cst.Return) and not any(any(m is n for m in walk(g)) for g in returns):
            bad.append("returns early outside a `if <pid condition>: return` guard")
    return returns, wrap, bad


def _carried(t: Target) -> tuple[dict[str, cst.Assign], list[str]]:
    """Scalar literals carried around a loop and updated with per-element values: name -> initial assignment."""
    dep = t.facts.pid_dependent
    out: dict[str, cst.Assign] = {}
    bad = []
    top = []
    for s in _top(t):  # the body of a final `if <pid condition>:` becomes top-level code
        wraps = isinstance(s, cst.If) and s.orelse is None and _names(s.test) & dep and not _is_return(s.body)
        top += body_of(s) if wraps and isinstance(s, cst.If) else [s]
    for i, s in enumerate(top):
        if not isinstance(s, (cst.For, cst.While)):
            continue
        if isinstance(s, cst.For) and _names(s.iter) & dep:
            bad.append(f"loop `for ... in {t.tree.code(s.iter)}` has a per-element trip count")
        if isinstance(s, cst.While) and _names(s.test) & dep:
            bad.append(f"loop `while {t.tree.code(s.test)}` has a per-element condition")
        inner = {
            tg
            for n in walk(s.body)
            if isinstance(n, (cst.Assign, cst.AugAssign))
            for tg in (
                _names(n.target) if isinstance(n, cst.AugAssign) else {x for tt in n.targets for x in _names(tt.target)}
            )
        }
        for name in sorted(inner & dep):
            init = [a for p in top[:i] if isinstance(p, cst.SimpleStatementLine) for a in p.body
                    if isinstance(a, cst.Assign) and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)
                    and a.targets[0].target.value == name]
            if not init:
                continue  # defined inside the loop only
            v = init[-1].value
            lit = v.expression if isinstance(v, cst.UnaryOperation) else v
            if isinstance(lit, (cst.Integer, cst.Float)):
                out[name] = init[-1]
            elif not (isinstance(v, cst.Call) and call_name(v) in ("tl.zeros", "tl.full")):
                bad.append(f"`{name}` is carried around a loop from `{t.tree.code(v)}`, not a literal to widen")
    return out, bad


def _split(t: Target) -> str | None:
    """D when the program id is only used as ``pid // D`` and ``pid % D`` (plus plain uses)."""
    var = t.facts.pid.get(0)
    divs = [
        n
        for n in walk(t.kernel.node.body)
        if isinstance(n, cst.BinaryOperation)
        and isinstance(n.operator, (cst.FloorDivide, cst.Modulo))
        and isinstance(n.left, cst.Name)
        and n.left.value == var
    ]
    rights = {t.tree.code(n.right) for n in divs}
    kinds = {type(n.operator) for n in divs}
    if len(rights) != 1 or kinds != {cst.FloorDivide, cst.Modulo}:
        return None
    d = rights.pop()
    return d if d in t.kernel.params else None


class BlockPerProgram:
    """One program per element -> one program per BLOCK tile (``tl.arange`` range, masks, ``triton.cdiv`` grid)."""

    kind = "block_per_program"
    card = "block-per-program"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        f = t.facts
        out = single_site_reasons(t)
        if 0 not in f.pid or f.pid_calls != 1 or f.pid_dims != 1:
            out.append("needs exactly one program id, `pid = tl.program_id(0)`")
        if f.aranges:
            out.append(f"already has a block range (tl.arange({f.aranges[0][0]}, {f.aranges[0][1]}))")
        if f.reductions or f.dots:
            out.append("has reductions or tl.dot (not an element-per-program kernel)")
        for a in f.accesses:
            if a.op in ATOMICS and not a.pid_dependent:
                out.append(f"{a.op}({a.pointer}) hits one address from every program (two_stage_reduction first)")
            elif a.op == "tl.store" and not a.pid_dependent:
                out.append(f"tl.store({a.pointer}) writes one address from every program")
            elif a.op in ATOMICS and a.statement_value_used:
                out.append(f"the old value of {a.op} is used")
        if not any(a.pid_dependent for a in f.accesses if a.op != "tl.load"):
            out.append("no store is addressed by the program id")
        if 0 in f.pid and _pid_line(t) is None:
            out.append("the program id is not read by a top-level `pid = tl.program_id(0)` statement")
        out += _guards(t)[2] + _carried(t)[1]
        if not out and len(t.launches[0].grid_elements or []) != 1:
            out.append(f"grid {t.launches[0].grid} is not one-dimensional")
        return out

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        param = str(params.get("param") or "BLOCK_SIZE")
        d = _split(t)
        if d is not None:
            known = (launch_record(t, ctx).get("ir_args") or {}).get(d)
            first = (
                min(1024, max(16, 1 << (int(known) - 1).bit_length())) if isinstance(known, int) and known > 0 else 256
            )
            values = [first, *(v for v in (params.get("values_2d") or [128, 256, 512, 1024]) if v != first)]
            # "fit": the column tile sized on the host from the row width of each call (cases of different widths
            # each get a full tile), then fixed sizes around the width the launches recorded
            return [{param: "fit", "form": "2d"}, *({param: int(v), "form": "2d"} for v in values[:3])]
        values = [int(v) for v in (params.get("values") or [1024, 256, 512, 2048])]
        return [{param: v, "form": "1d"} for v in values]

    def programs_after(
        self, t: Target, ctx: RecipeContext, point: dict[str, Any], rec: Mapping[str, Any]
    ) -> int | None:
        """Programs of a recorded per-element launch ``(n,)`` after the point (the grid-fill guard, ``grid_fill``):
        ``cdiv(n, BLOCK)``; 2-D: ``cdiv(n, D) x cdiv(D, BLOCK)`` with the recorded ``D`` (the host's ``fit`` block is
        ``min(1024, next_power_of_2(D))``)."""
        block = next((v for n, v in point.items() if n != "form"), None)
        if point.get("form") != "2d":
            return shrunk(rec, block) if isinstance(block, int) else None
        d = _split(t)
        width = (rec.get("ir_args") or {}).get(d) if d is not None else None
        if not isinstance(width, int) or width <= 0 or (rows := shrunk(rec, width)) is None:
            return None
        block = min(1024, 1 << (width - 1).bit_length()) if block == "fit" else block
        return rows * math.ceil(width / block) if isinstance(block, int) and block > 0 else None

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        tree, k, site = t.tree, t.kernel, t.sites[0]
        param = next(n for n in point if n != "form")
        block = fresh(t, param) if param in k.params else param
        value, var = point[param], t.facts.pid[0]
        vector: set[str] = set()
        elems = t.launches[0].grid_elements
        assert elems is not None  # preconditions: single_site_reasons refuses a grid that is not a tuple
        g0 = elems[0]
        bound = next((p for p in k.params if host_arg_text(t, p) == g0), None)
        new_params = [] if bound else [fresh(t, "n_elems_bpp")]
        ok = fresh(t, "block_ok")
        pid_line = _pid_line(t)
        assert pid_line is not None
        n = bound or new_params[0]
        d = _split(t) if point.get("form") == "2d" else None
        if d is None:
            pid = pid_line.body[0]
            assert isinstance(pid, cst.Assign)  # _pid_line finds the line by its assignment
            tree.replace(pid.value, f"tl.program_id(0) * {block} + tl.arange(0, {block})")
            tree.insert_after(pid_line, f"{ok} = {var} < {n}\n")
            grid = f"(triton.cdiv({g0}, {value}),)"
            shape = f"{block} elements per program"
        else:
            row, col = fresh(t, "row_bpp"), fresh(t, "col_bpp")
            tree.remove(pid_line)
            tree.insert_before(
                pid_line,
                f"{row} = tl.program_id(0)\n{col} = tl.program_id(1) * {block} + tl.arange(0, {block})\n"
                f"{var} = {row} * {d} + {col}\n{ok} = ({col} < {d}) & ({var} < {n})\n",
            )
            rows = []
            for node in walk(k.node.body):
                if (isinstance(node, cst.BinaryOperation) and isinstance(node.left, cst.Name) and node.left.value == var
                        and isinstance(node.operator, (cst.FloorDivide, cst.Modulo)) and tree.code(node.right) == d):
                    tree.replace(node, row if isinstance(node.operator, cst.FloorDivide) else col)
                    if isinstance(node.operator, cst.FloorDivide):
                        rows.append(id(node))
            vector = dependents(k.node.body, {var}, frozenset(rows))  # what the row alone addresses stays scalar
            dh = host_arg_text(t, d)
            if value == "fit":
                value = fresh(t, "block_bpp")
                gnode = grid_node(site, tree)  # before the grid's own assignment when the launch names a variable
                at = tree.statement_of(site.function, gnode) if site.function is not None else None
                tree.insert_before(at if at is not None else launch_statement(site),
                                   f"{value} = min(1024, triton.next_power_of_2({dh}))\n")
            grid = f"(triton.cdiv({g0}, {dh}), triton.cdiv({dh}, {value}))"
            shape = f"a row x {block}-column tile per program (no per-element {var} // {d}, {var} % {d})"
        returns, wrap, _ = _guards(t)
        for g in returns:
            tree.remove(g)
            cond = _negate(t, g.test)
            if cond != f"{var} < {n}":  # the bound mask already says it
                tree.insert_before(g, f"{ok} = {ok} & ({cond})\n")
        if wrap is not None:
            tree.unwrap(wrap, f"{ok} = {ok} & ({tree.code(wrap.test)})\n")
        carried, _ = _carried(t)
        for assign in carried.values():
            lit = tree.code(assign.value)
            dtype = "tl.float32" if "." in lit or "e" in lit.lower() or "inf" in lit else "tl.int32"
            tree.replace(assign.value, f"tl.full([{block}], {lit}, {dtype})")
        masked = 0
        for a in t.facts.accesses:
            ptr = arg_value(a.node, "pointer", 0)
            if a.pid_dependent and (d is None or (ptr is not None and _names(ptr) & vector)):
                and_mask(t, a.node, ok, a.op == "tl.load")
                masked += 1
        tree.add_params(k.node, [*new_params, f"{block}: tl.constexpr"])
        tree.replace(grid_node(site, tree), grid)
        for p in new_params:
            tree.add_keyword(site.call, p, g0)
        tree.add_keyword(site.call, block, str(value))
        warps = _warps(site, value)
        if warps:  # the launch's warps were chosen for one element per program: size them for the tile
            tree.add_keyword(site.call, "num_warps", warps)
        return (f"{k.name}: one program per element -> {shape}; {masked} access(es) masked by {ok}, "
                f"{len(returns) + (wrap is not None)} guard(s) folded into the mask"
                + (f", {sorted(carried)} widened to [{block}] vectors" if carried else "")
                + f"; grid ({g0},) -> {grid}")


def _warps(site: Any, value: int | str) -> str | None:
    """``num_warps`` for a tile of ``value`` elements (about 128 per warp, 1 to 8) when the launch names its warps
    (they were chosen for one element per program) or the tile is sized per call; else None (Triton's default)."""
    if isinstance(value, int):
        return str(max(1, min(8, value // 128))) if site.keyword("num_warps") is not None else None
    return f"max(1, min(8, {value} // 128))"


def _negate(t: Target, test: cst.BaseExpression) -> str:
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        op = _CMP_INVERSE.get(type(test.comparisons[0].operator))
        if op is not None:
            return f"{t.tree.code(test.left)} {op} {t.tree.code(test.comparisons[0].comparator)}"
    return f"({t.tree.code(test)}) == 0"
