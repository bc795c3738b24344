"""The ``grouped_program_order`` recipe: L2-friendly (super-tiled) program order for 2-D tiled kernels.

A kernel that reads ``pid_m = tl.program_id(0)`` and ``pid_n = tl.program_id(1)`` visits output tiles in launch
order: consecutive programs share a B column panel but stream a new A row panel each. The rewrite keeps the
grid and the host code as they are and remaps the linear program index inside the kernel (the Triton matmul
tutorial's grouping; ``tl.num_programs`` gives the tile counts), so every (pid_m, pid_n) is still visited exactly
once::

    _pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    _n_m, _n_n = tl.num_programs(0), tl.num_programs(1)
    _in_group = GROUP_SIZE_M * _n_n
    _first_m = (_pid // _in_group) * GROUP_SIZE_M
    _group_m = tl.minimum(_n_m - _first_m, GROUP_SIZE_M)
    pid_m = _first_m + (_pid % _in_group) % _group_m
    pid_n = (_pid % _in_group) // _group_m

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
    if 0 not in pids or 1 not in pids:
        raise NotApplicable(f"{k.name} does not read tl.program_id(0) and tl.program_id(1) into names at the top level")
    (s0, m), (s1, n) = pids[0], pids[1]
    if s1.lineno != s0.end_lineno + 1:
        raise NotApplicable(f"{k.name}: the two program ids are not read on consecutive lines")
    later = [x for x in ast.walk(k.node) if isinstance(x, ast.Name) and x.id in (m, n) and isinstance(x.ctx, ast.Store)]
    if len(later) != 2:
        raise NotApplicable(f"{k.name} reassigns {m} or {n}")
    sites = [s for s in p.sites if s.kernel == k.name]
    tried = {t.get(PARAM) for t in ctx.tried}
    options = [v for v in values if v not in tried]
    if not options:
        raise NotApplicable(f"every {PARAM} value was already tried on this base")
    g = 8 if 8 in options else options[0]
    st, ind = p.st, p.st.indent_of(s0.lineno)
    block = (f"{ind}_pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)\n"
             f"{ind}_n_m = tl.num_programs(0)\n"
             f"{ind}_in_group = {PARAM} * tl.num_programs(1)\n"
             f"{ind}_first_m = (_pid // _in_group) * {PARAM}\n"
             f"{ind}_group_m = tl.minimum(_n_m - _first_m, {PARAM})\n"
             f"{ind}{m} = _first_m + (_pid % _in_group) % _group_m\n"
             f"{ind}{n} = (_pid % _in_group) // _group_m\n")
    st.replace_range(st.line_start(s0.lineno), st.line_start(s1.end_lineno + 1), block)
    st.insert(st.span(k.node.args.args[-1])[1], f", {PARAM}: tl.constexpr")
    for site in sites:
        _insert_keyword(st, site.call, f"{PARAM}={g}")
    desc = (f"{k.name}: grouped program order ({PARAM}={g}): {m}/{n} remapped from the linear program index so "
            f"{g} tiles along {m} share operand panels in L2; grid and host code unchanged")
    return _finish("grouped_program_order", ctx, st.apply(), desc, {PARAM: g})
