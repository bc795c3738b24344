"""The ``grouped_program_order`` recipe: L2-friendly (super-tiled) program order for 2-D tiled kernels.

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
the other tile count derived from ``tl.num_programs(0)``. Domain of that form: the host grid is one product of
two tile counts (``(cdiv(M, BM) * cdiv(N, BN),)``), so every program maps to one tile; anything else is refused.

Later rounds tune ``GROUP_SIZE_M`` like any literal constexpr.
"""

from __future__ import annotations

import ast
from typing import Any

from optimizer.recipes.base import (
    NotApplicable,
    RecipeContext,
    RewriteResult,
    _finish,
    _insert_keyword,
    _parse,
)
from optimizer.source import Kernel

__all__ = ["apply_grouped_program_order"]

PARAM = "GROUP_SIZE_M"


def _pid_axis(stmt: ast.stmt) -> tuple[str, int] | None:
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) == "tl.program_id" and stmt.value.args
            and isinstance(stmt.value.args[0], ast.Constant)):
        return stmt.targets[0].id, int(stmt.value.args[0].value)
    return None


def apply_grouped_program_order(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    values = [int(v) for v in (params.get(PARAM) or params.get("values") or [8])]
    p = _parse(ctx)
    reason = "no launched kernel reads tl.program_id(0) and tl.program_id(1) as its tile indices"
    for name in dict.fromkeys(s.kernel for s in p.sites):
        k = p.kernels[name]
        try:
            return _rewrite(p, ctx, k, values)
        except NotApplicable as exc:
            reason = str(exc)
    raise NotApplicable(reason)


def _rewrite(p: Any, ctx: RecipeContext, k: Kernel, values: list[int]) -> RewriteResult:
    if PARAM in k.constexprs:
        raise NotApplicable(f"{k.name} already has {PARAM}; tune it as a launch parameter")
    if not any(isinstance(n, ast.Call) and ast.unparse(n.func) == "tl.dot" for n in ast.walk(k.node)):
        raise NotApplicable(f"{k.name} has no tl.dot: program order matters for operand reuse in tiled matmuls")
    pids = {axis: (stmt, var) for stmt in k.node.body if (pa := _pid_axis(stmt)) for var, axis in [pa]}
    if 0 in pids and 1 not in pids and "tl.program_id(1)" not in ast.unparse(k.node):
        return _rewrite_1d(p, ctx, k, values, pids[0][1])
    if 0 not in pids or 1 not in pids:
        raise NotApplicable(f"{k.name} does not read tl.program_id(0) and tl.program_id(1) into names at the top level")
    (s0, m), (s1, n) = pids[0], pids[1]
    if s1.lineno != s0.end_lineno + 1:
        raise NotApplicable(f"{k.name}: the two program ids are not read on consecutive lines")
    later = [x for x in ast.walk(k.node) if isinstance(x, ast.Name) and x.id in (m, n) and isinstance(x.ctx, ast.Store)]
    if len(later) != 2:
        raise NotApplicable(f"{k.name} reassigns {m} or {n}")
    g = _group_size(ctx, values)
    ind = p.st.indent_of(s0.lineno)
    counts = (f"{ind}_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)\n"
              f"{ind}_n_m = tl.num_programs(0)\n{ind}_n_n = tl.num_programs(1)\n")
    _emit(p, k, s0, s1, counts + _grouped(ind, "_pid", m, n), g)
    desc = (f"{k.name}: grouped program order ({PARAM}={g}): {m}/{n} remapped from the linear program index so "
            f"{g} tiles along {m} share operand panels in L2; grid and host code unchanged")
    return _finish("grouped_program_order", ctx, p.st.apply(), desc, {PARAM: g})


def _group_size(ctx: RecipeContext, values: list[int]) -> int:
    """The GROUP_SIZE_M to try: 8 unless tried on this base, else the first untried value."""
    tried = {t.get(PARAM) for t in ctx.tried}
    options = [v for v in values if v not in tried]
    if not options:
        raise NotApplicable(f"every {PARAM} value was already tried on this base")
    return 8 if 8 in options else options[0]


def _grouped(ind: str, pid: str, m: str, n: str) -> str:
    """The tutorial's grouped remap of the linear index ``pid`` over ``_n_m`` x ``_n_n`` tiles (both bound before)."""
    return (f"{ind}_in_group = {PARAM} * _n_n\n"
            f"{ind}_first_m = ({pid} // _in_group) * {PARAM}\n"
            f"{ind}_group_m = tl.minimum(_n_m - _first_m, {PARAM})\n"
            f"{ind}{m} = _first_m + ({pid} % _in_group) % _group_m\n"
            f"{ind}{n} = ({pid} % _in_group) // _group_m\n")


def _emit(p: Any, k: Kernel, s0: ast.stmt, s1: ast.stmt, block: str, g: int) -> None:
    """Replace the two tile-index statements by ``block``, add the constexpr, pass it at each launch of ``k``."""
    st = p.st
    st.replace_range(st.line_start(s0.lineno), st.line_start(s1.end_lineno + 1), block)  # type: ignore[operator]
    st.insert(st.span(k.node.args.args[-1])[1], f", {PARAM}: tl.constexpr")
    for site in (s for s in p.sites if s.kernel == k.name):
        _insert_keyword(st, site.call, f"{PARAM}={g}")


def _split(stmt: ast.stmt, pid: str) -> tuple[str, str, str] | None:
    """``x = pid // D`` or ``x = pid % D`` at the top level -> (x, "//" or "%", D)."""
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.BinOp) and isinstance(stmt.value.left, ast.Name)
            and stmt.value.left.id == pid
            and isinstance(stmt.value.op, (ast.FloorDiv, ast.Mod))):
        op = "//" if isinstance(stmt.value.op, ast.FloorDiv) else "%"
        return stmt.targets[0].id, op, ast.unparse(stmt.value.right)
    return None


def _m_role(k: Kernel, a: str, b: str) -> str | None:
    """Which of two tile indices walks M: the one that scales BLOCK_M (or whose partner scales BLOCK_N)."""
    text = ast.unparse(k.node)
    for var in (a, b):
        other = b if var == a else a
        if f"{var} * BLOCK_M" in text or f"{var} * BM" in text:
            return var
        if f"{other} * BLOCK_N" in text or f"{other} * BN" in text:
            return var
    return None


def _rewrite_1d(p: Any, ctx: RecipeContext, k: Kernel, values: list[int], pid: str) -> RewriteResult:
    body = k.node.body
    splits = [(i, sp) for i, stmt in enumerate(body) if (sp := _split(stmt, pid))]
    if len(splits) != 2 or splits[1][0] != splits[0][0] + 1 or {splits[0][1][1], splits[1][1][1]} != {"//", "%"} \
            or splits[0][1][2] != splits[1][1][2]:
        raise NotApplicable(f"{k.name}: a 1-D program id not split into two tile indices by `// n` and `% n` on "
                            "consecutive lines")
    (i0, (x0, op0, dim)), (_, (x1, _op1, _)) = splits
    m = _m_role(k, x0, x1)
    if m is None:
        raise NotApplicable(f"{k.name}: cannot tell which of {x0}, {x1} walks the M tiles "
                            "(no `* BLOCK_M` / `* BLOCK_N`)")
    n = x1 if m == x0 else x0
    quotient = x0 if op0 == "//" else x1
    row_major = quotient == m  # pid_m = pid // n_n: the divisor counts N tiles
    stores = [x for x in ast.walk(k.node)
              if isinstance(x, ast.Name) and x.id in (m, n, pid) and isinstance(x.ctx, ast.Store)]
    if len(stores) != 3:
        raise NotApplicable(f"{k.name} reassigns {pid}, {m} or {n}")
    for site in (s for s in p.sites if s.kernel == k.name):
        grid = site.grid
        if isinstance(grid, ast.Name) and site.function is not None:
            defs = [a.value for a in ast.walk(site.function) if isinstance(a, ast.Assign) and len(a.targets) == 1
                    and isinstance(a.targets[0], ast.Name) and a.targets[0].id == grid.id]
            grid = defs[-1] if len(defs) == 1 else grid
        elems = grid.elts if isinstance(grid, ast.Tuple) else None
        if not elems or len(elems) != 1 or not (isinstance(elems[0], ast.BinOp) and isinstance(elems[0].op, ast.Mult)):
            raise NotApplicable(f"{k.name}: the launch grid is not one product of two tile counts (got "
                                f"{ast.unparse(site.grid)}): programs beyond the tiles would be remapped out of range")
    g = _group_size(ctx, values)
    s0, s1 = body[i0], body[i0 + 1]
    ind = p.st.indent_of(s0.lineno)
    counts = (f"{ind}_n_n = {dim}\n{ind}_n_m = tl.num_programs(0) // _n_n\n" if row_major
              else f"{ind}_n_m = {dim}\n{ind}_n_n = tl.num_programs(0) // _n_m\n")
    _emit(p, k, s0, s1, counts + _grouped(ind, pid, m, n), g)
    walk = "row-major" if row_major else "column-major"
    desc = (f"{k.name}: grouped program order ({PARAM}={g}) on the 1-D program id: the {walk} split of {pid} into "
            f"{m}/{n} becomes groups of {g} M tiles that share operand panels in L2; grid and host code unchanged")
    return _finish("grouped_program_order", ctx, p.st.apply(), desc, {PARAM: g})
