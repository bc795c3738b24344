"""``grouped_program_order``: L2-friendly (super-tiled) program order for 2-D tiled kernels (card
``grouped-program-order``).

A kernel that reads ``pid_m = tl.program_id(0)`` and ``pid_n = tl.program_id(1)`` visits output tiles in launch
order: consecutive programs share a B column panel but stream a new A row panel each. The rewrite keeps the
grid and the host code as they are and remaps the linear program index inside the kernel (the Triton matmul
tutorial's grouping; ``tl.num_programs`` gives the tile counts), so every (pid_m, pid_n) is still visited exactly
once::

    _pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    _n_m = tl.num_programs(0)
    _n_n = tl.num_programs(1)
    _in_group = GROUP_SIZE_M * _n_n
    _first_m = (_pid // _in_group) * GROUP_SIZE_M
    _group_m = tl.minimum(_n_m - _first_m, GROUP_SIZE_M)
    pid_m = _first_m + (_pid % _in_group) % _group_m
    pid_n = (_pid % _in_group) // _group_m

A 1-D launch whose kernel splits one program id itself (``pid_m = pid // n``, ``pid_n = pid % n`` for a row-major
walk, or ``pid_m = pid % n``, ``pid_n = pid // n`` for a column-major one) gets the same grouping on that id, with
the other tile count derived from ``tl.num_programs(0)``.

Domain: a launched kernel that calls ``tl.dot``, has no ``GROUP_SIZE_M`` constexpr yet (later rounds tune it as a
launch parameter), and reads its tile indices at the top level either as ``tl.program_id(0)`` / ``tl.program_id(1)``
on consecutive lines, or as one ``tl.program_id(0)`` split by ``// n`` and ``% n`` on consecutive lines (the index
that scales ``BLOCK_M`` / ``BM`` walks M). Refused: a tile index reassigned later, a launch that passes a defaulted
parameter by position (the new constexpr would take its place), and, for the 1-D form, a host grid that is not one
product of two tile counts (``(cdiv(M, BM) * cdiv(N, BN),)``): programs beyond the tiles would be remapped out of
range. Points: ``GROUP_SIZE_M`` 8 first, then the recipe's other values in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.rewrite.common import defaulted_positional_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import body_of, call_name, leading_lines, statements, walk

__all__ = ["PARAM", "GroupedProgramOrder"]

PARAM = "GROUP_SIZE_M"


def _assign(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    if (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1 and isinstance(stmt.body[0].targets[0].target, cst.Name)):
        return stmt.body[0].targets[0].target.value, stmt.body[0].value
    return None


def _pid_axis(stmt: cst.CSTNode) -> tuple[str, int] | None:
    a = _assign(stmt)
    if a and isinstance(a[1], cst.Call) and call_name(a[1]) == "tl.program_id" and a[1].args \
            and a[1].args[0].keyword is None and isinstance(a[1].args[0].value, cst.Integer):
        return a[0], int(a[1].args[0].value.value)
    return None


def _consecutive(s0: cst.BaseStatement, s1: cst.BaseStatement, body: list[cst.BaseStatement]) -> bool:
    """``s1`` directly follows ``s0`` with no blank line or comment between them."""
    i = next(j for j, s in enumerate(body) if s is s0)
    return i + 1 < len(body) and body[i + 1] is s1 and not getattr(s1, "leading_lines", ())


def _stored(node: cst.CSTNode, names: set[str]) -> int:
    """How many times ``node`` binds one of ``names`` (assignment, augmented assignment, loop or with targets)."""
    def bound(target: cst.CSTNode | None) -> list[str]:
        if isinstance(target, cst.Name):
            return [target.value]
        if isinstance(target, (cst.Tuple, cst.List)):
            return [x for e in target.elements for x in bound(e.value)]
        if isinstance(target, cst.StarredElement):
            return bound(target.value)
        return []

    count = 0
    for n in walk(node):
        targets: list[cst.CSTNode | None] = []
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For)):
            targets = [n.target]
        elif isinstance(n, cst.NamedExpr):
            targets = [n.target]
        elif isinstance(n, cst.WithItem) and n.asname is not None:
            targets = [n.asname.name]
        count += sum(1 for tg in targets for x in bound(tg) if x in names)
    return count


def _split(stmt: cst.CSTNode, pid: str, code: Any) -> tuple[str, str, str] | None:
    """``x = pid // D`` or ``x = pid % D`` at the top level -> (x, "//" or "%", D)."""
    a = _assign(stmt)
    if (a and isinstance(a[1], cst.BinaryOperation) and isinstance(a[1].left, cst.Name) and a[1].left.value == pid
            and isinstance(a[1].operator, (cst.FloorDivide, cst.Modulo))):
        return a[0], "//" if isinstance(a[1].operator, cst.FloorDivide) else "%", code(a[1].right)
    return None


def _scales(k: cst.FunctionDef, var: str, blocks: tuple[str, ...]) -> bool:
    """Whether some ``... var * BLOCK`` product multiplies ``var`` by one of ``blocks`` (a name starting with one)."""
    for n in walk(k):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply) \
                and isinstance(n.right, cst.Name) and n.right.value.startswith(blocks):
            left = n.left
            while isinstance(left, cst.BinaryOperation) and not left.lpar:
                left = left.right
            if isinstance(left, cst.Name) and left.value == var:
                return True
    return False


def _m_role(k: cst.FunctionDef, a: str, b: str) -> str | None:
    """Which of two tile indices walks M: the one that scales BLOCK_M (or whose partner scales BLOCK_N)."""
    for var in (a, b):
        other = b if var == a else a
        if _scales(k, var, ("BLOCK_M", "BM")) or _scales(k, other, ("BLOCK_N", "BN")):
            return var
    return None


@dataclass
class _Plan:
    first: cst.BaseStatement  # the two statements that read the tile indices, replaced by the remap
    second: cst.BaseStatement
    counts: str  # the lines that bind _n_m and _n_n (and _pid in the 2-D form)
    pid: str
    m: str
    n: str
    walk: str | None  # "row-major" / "column-major" for the 1-D form, None for the 2-D one


def _plan(t: Target) -> _Plan | str:
    k, name = t.kernel, t.kernel.name
    if PARAM in k.constexprs:
        return f"{name} already has {PARAM}; tune it as a launch parameter"
    if not any(isinstance(n, cst.Call) and call_name(n) == "tl.dot" for n in walk(k.node)):
        return f"{name} has no tl.dot: program order matters for operand reuse in tiled matmuls"
    body = body_of(k.node)
    pids: dict[int, tuple[cst.BaseStatement, str]] = {}
    for stmt in body:
        if (pa := _pid_axis(stmt)) is not None:
            pids[pa[1]] = (stmt, pa[0])
    reads_axis1 = any(isinstance(n, cst.Call) and call_name(n) == "tl.program_id" and n.args
                      and n.args[0].keyword is None and isinstance(n.args[0].value, cst.Integer)
                      and n.args[0].value.value == "1" for n in walk(k.node))
    if 0 in pids and 1 not in pids and not reads_axis1:
        return _plan_1d(t, body, pids[0][1])
    if 0 not in pids or 1 not in pids:
        return f"{name} does not read tl.program_id(0) and tl.program_id(1) into names at the top level"
    (s0, m), (s1, n) = pids[0], pids[1]
    if not _consecutive(s0, s1, body):
        return f"{name}: the two program ids are not read on consecutive lines"
    if _stored(k.node, {m, n}) != 2:
        return f"{name} reassigns {m} or {n}"
    counts = ("_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)\n"
              "_n_m = tl.num_programs(0)\n_n_n = tl.num_programs(1)\n")
    return _Plan(s0, s1, counts, "_pid", m, n, None)


def _plan_1d(t: Target, body: list[cst.BaseStatement], pid: str) -> _Plan | str:
    name = t.kernel.name
    splits = [(i, sp) for i, stmt in enumerate(body) if (sp := _split(stmt, pid, t.tree.code))]
    if (len(splits) != 2 or splits[1][0] != splits[0][0] + 1
            or {splits[0][1][1], splits[1][1][1]} != {"//", "%"} or splits[0][1][2] != splits[1][1][2]):
        return f"{name}: a 1-D program id not split into two tile indices by `// n` and `% n` on consecutive lines"
    (i0, (x0, op0, dim)), (_, (x1, _op1, _)) = splits
    m = _m_role(t.kernel.node, x0, x1)
    if m is None:
        return f"{name}: cannot tell which of {x0}, {x1} walks the M tiles (no `* BLOCK_M` / `* BLOCK_N`)"
    n = x1 if m == x0 else x0
    row_major = (x0 if op0 == "//" else x1) == m  # pid_m = pid // n_n: the divisor counts N tiles
    if _stored(t.kernel.node, {m, n, pid}) != 3:
        return f"{name} reassigns {pid}, {m} or {n}"
    for site in t.sites:
        grid = site.grid
        if isinstance(grid, cst.Name) and site.function is not None:
            defs = t.tree.assignments(site.function, grid.value)
            grid = defs[-1].value if len(defs) == 1 else grid
        elems = grid.elements if isinstance(grid, cst.Tuple) else None
        if not elems or len(elems) != 1 or not (isinstance(elems[0].value, cst.BinaryOperation)
                                                and isinstance(elems[0].value.operator, cst.Multiply)):
            return (f"{name}: the launch grid is not one product of two tile counts (got {t.tree.code(site.grid)}): "
                    "programs beyond the tiles would be remapped out of range")
    counts = (f"_n_n = {dim}\n_n_m = tl.num_programs(0) // _n_n\n" if row_major
              else f"_n_m = {dim}\n_n_n = tl.num_programs(0) // _n_m\n")
    return _Plan(body[i0], body[i0 + 1], counts, pid, m, n, "row-major" if row_major else "column-major")


class GroupedProgramOrder:
    """2-D tile indices -> the matmul tutorial's grouped order, remapped in the kernel; grid and host unchanged."""

    kind = "grouped_program_order"
    card = "grouped-program-order"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan = _plan(t)
        if isinstance(plan, str):
            return [plan]
        return defaulted_positional_reasons(t.kernel.node, [s.call for s in t.sites])

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        values = list(dict.fromkeys(int(v) for v in (params.get(PARAM) or params.get("values") or [8])))
        return [{PARAM: v} for v in sorted(values, key=lambda v: v != 8)]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        p = _plan(t)
        assert not isinstance(p, str)
        g = int(point[PARAM])
        remap = (f"_in_group = {PARAM} * _n_n\n"
                 f"_first_m = ({p.pid} // _in_group) * {PARAM}\n"
                 f"_group_m = tl.minimum(_n_m - _first_m, {PARAM})\n"
                 f"{p.m} = _first_m + ({p.pid} % _in_group) % _group_m\n"
                 f"{p.n} = ({p.pid} % _in_group) // _group_m\n")
        new = statements(p.counts + remap)
        new[0] = new[0].with_changes(leading_lines=leading_lines(p.first))
        t.tree.edit(p.first, lambda _old: cst.FlattenSentinel(new))
        t.tree.remove(p.second)
        t.tree.add_params(t.kernel.node, [f"{PARAM}: tl.constexpr"])
        for site in t.sites:
            t.tree.add_keyword(site.call, PARAM, str(g))
        name = t.kernel.name
        if p.walk is None:
            return (f"{name}: grouped program order ({PARAM}={g}): {p.m}/{p.n} remapped from the linear program index "
                    f"so {g} tiles along {p.m} share operand panels in L2; grid and host code unchanged")
        return (f"{name}: grouped program order ({PARAM}={g}) on the 1-D program id: the {p.walk} split of {p.pid} "
                f"into {p.m}/{p.n} becomes groups of {g} M tiles that share operand panels in L2; grid and host code "
                "unchanged")
