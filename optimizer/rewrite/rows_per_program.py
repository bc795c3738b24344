"""``rows_per_program``: several rows per program for a one-row-per-program kernel (card ``rows-per-program``).

``{"param": "ROWS_PER_PROGRAM", "values": [...], "form": "tile"|"loop"}``. The tile form
(``optimizer.rewrite.row_tile``: rows become the first axis of a [ROWS, BLOCK] tile) where the kernel is
straight-line code, else (or when the recipe asks for it) a static loop over ROWS rows
(``optimizer.rewrite.row_loop``); the new constexpr goes before the kernel's defaulted parameters, the grid's first
axis is divided with ``triton.cdiv`` and the row count is passed as ``n_rows_rpp`` unless a kernel parameter
already receives it. A kernel that already has the constexpr gets it tuned like any literal (``launch_params``).

Points: the values not yet tried, the largest that leaves at least two programs per SM on the recorded grid first
(the tile form also keeps ROWS x the recorded block within 2048 elements), then the next best one. A value that
would leave a recorded case with fewer programs than SMs (or shrink a grid already below that) is dropped by the
grid-fill guard (``grid_fill``); where every value is, the kernel is refused with the case and the counts.

Domain: the hot kernel (else the most launched, else the first launched one) that reads ``x = tl.program_id(0)``
at the top level; no other kernel is tried in its place. Refused: a ``tl.dot`` kernel (its tiles are tuned by block
sizes); an early ``return`` (top-level ``if <guard>: return`` guards are folded first by ``early_return.py``,
through the registry); a loop that already walks the program index; launched from several places; a grid that
is not a tuple; a row count that exists only inside an autotuned grid lambda (``META[...]`` of a key the launch
does not pass: a key it passes, ``BLOCK_SIZE=block``, is read from the launch); a recorded block of
8192 elements or more, or a 2-D tile of as many (each program already owns a wide row: the H200 campaign gained
only up to 4096); a launch
passing a defaulted parameter by position (the new constexpr would take its place); every value already tried.
"""

from __future__ import annotations

import io
import math
import textwrap
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import libcst as cst

from optimizer.rewrite.common import defaulted_positional_reasons
from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.engine import Target, applier, parse_tree
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.grid_fill import shrunk
from optimizer.rewrite.heuristic_rows import HeuristicRows
from optimizer.rewrite.launch_knobs import NOT_LITERAL, grid_expr, literal_value
from optimizer.rewrite.launch_params import LaunchParams
from optimizer.rewrite.row_loop import rows_as_loop
from optimizer.rewrite.row_tile import plan_row_tile, tile_refusal
from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree, arg_value, body_of, dotted, walk

__all__ = ["WIDE_ROW_BLOCK", "RowsPerProgram", "apply_rows_per_program", "row_index"]

#: elements of a row tile (ROWS x BLOCK) the first tiled point aims at; later rounds tune ROWS like any constexpr
_TILE_ELEMENTS = 2048
#: a recorded row block (largest BLOCK* constexpr of the kernel's launch) from which rows per program is refused:
#: each program already owns a wide row. On the H200 the recipe gained only with blocks up to 4096 elements
#: (1.18-8.5x) and was neutral or slower at 8192 and beyond (0.21x on a 16384-wide spilling layernorm).
WIDE_ROW_BLOCK = 8192


def row_index(t: Target) -> tuple[cst.SimpleStatementLine, cst.Assign] | None:
    """The top-level ``x = tl.program_id(0)`` (its line and the assignment)."""
    for line in body_of(t.kernel.node):
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for stmt in line.body:
            if (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name)
                    and isinstance(stmt.value, cst.Call) and dotted(stmt.value.func).endswith("program_id")):
                pos = [a.value for a in stmt.value.args if a.keyword is None]
                axis = pos[0] if pos else arg_value(stmt.value, "axis")
                v = literal_value(axis) if axis is not None else NOT_LITERAL
                if v is not NOT_LITERAL and not isinstance(v, str) and v == 0:
                    return line, stmt
    return None


def _tokens(code: str) -> list[str]:
    """The code's tokens, comments left out."""
    toks = tokenize.generate_tokens(io.StringIO(textwrap.dedent(code)).readline)
    return [tok.string for tok in toks if tok.type != tokenize.COMMENT]


def _row_block(ctx: RecipeContext, kernel: str) -> int:
    consts = next((r.get("constexprs") or {} for r in ctx.launches if r.get("kernel") == kernel), {})
    return max((int(v) for n, v in consts.items() if n.upper().startswith("BLOCK") and isinstance(v, int)), default=0)


def _tile_elements(ctx: RecipeContext, k: CstKernel) -> int:
    """Elements one program already owns: its recorded row block (a ``BLOCK*`` constexpr, else its widest
    ``tl.arange`` extent, ``PADDED_HEAD_SIZE=128``), or, for a kernel that builds 2-D tiles
    (``offs_m[:, None] * n + offs_n[None, :]``), the product of its two widest ``tl.arange`` extents (128 x 128 for
    a block-scaled dequant: one program already owns 16384 elements, however short each row is)."""
    block = _row_block(ctx, k.name)
    consts = next((r.get("constexprs") or {} for r in ctx.launches if r.get("kernel") == k.name), {})
    extents = []
    for n in walk(k.node):
        if isinstance(n, cst.Call) and dotted(n.func) == "tl.arange" and len(n.args) == 2:
            end = n.args[1].value
            v = literal_value(end)
            v = consts.get(end.value) if v is NOT_LITERAL and isinstance(end, cst.Name) else v
            if isinstance(v, int) and not isinstance(v, bool):
                extents.append(v)
    extents.sort(reverse=True)
    two_d = any(isinstance(n, cst.Subscript) and any(isinstance(m, cst.Name) and m.value == "None"
                                                     for e in n.slice for m in walk(e)) for n in walk(k.node))
    if two_d and len(extents) >= 2:
        return max(block, extents[0] * extents[1])
    return max([block, *extents[:1]])


@dataclass
class _Plan:
    pid_line: cst.SimpleStatementLine
    pid: cst.Assign
    grid: cst.BaseExpression  # the grid expression (a lambda's or a tuple)
    g0: cst.BaseExpression  # its first axis
    n_rows: str | None  # the kernel parameter the launch passes the row count to
    rows_text: str  # the row count as the launcher computes it (passed as n_rows_rpp where no parameter has it)
    options: list[int]
    fit: list[int]
    tile_reason: str | None  # None: the tile form applies


def _plan(t: Target, ctx: RecipeContext, params: dict[str, Any]) -> _Plan | str:
    k, tree, param = t.kernel, t.tree, str(params.get("param") or "ROWS_PER_PROGRAM")
    row = row_index(t)
    assert row is not None  # selects() took the kernel for its row index
    pid_line, pid = row
    var = cst.ensure_type(pid.targets[0].target, cst.Name).value  # row_index: a plain name
    if any(isinstance(n, cst.Call) and dotted(n.func) == "tl.dot" for n in walk(k.node)):
        return f"{k.name} is a tiled tl.dot kernel: its tiles are tuned by block sizes, not rows per program"
    if any(isinstance(n, cst.Return) for n in walk(k.node)):
        return f"{k.name} returns early; a row loop cannot contain return"
    if any(isinstance(n, (cst.For, cst.While)) and any(var in tok for tok in _tokens(tree.module.code_for_node(n)))
           for n in walk(k.node)):
        return f"{k.name} already loops over its program index"
    if len(t.sites) != 1:
        return f"{k.name} is launched from {len(t.sites)} places; rewrite needs exactly one"
    site = t.sites[0]
    grid, _assign = grid_expr(tree, site)
    body = grid.body if isinstance(grid, cst.Lambda) else grid
    if not isinstance(body, (cst.Tuple, cst.List)) or not body.elements:
        return "grid is not a tuple expression"
    g0 = body.elements[0].value
    g0_text = tree.code(g0)
    n_rows = next((name for name in k.params
                   if (a := site.arg_for(k, name)) is not None and tree.code(a) == g0_text), None)
    rows_text = g0_text
    if isinstance(grid, cst.Lambda) and not n_rows:
        meta = grid.params.params[0].name.value if grid.params.params else "META"
        if any(isinstance(n, cst.Name) and n.value == meta for n in walk(g0)):
            host = _host_count(tree, k, site, g0, meta)
            if host is None:
                # the row count exists only inside the grid lambda (an autotuned block size decides it), so the
                # host cannot pass it to the kernel as a bound; grouping rows would also only re-tune that block
                return (f"{k.name}'s program count {g0_text} depends on the autotuned {meta}[...]; rows per "
                        f"program would duplicate the block-size search (tune {meta}'s block sizes instead)")
            rows_text = host
    wide = _tile_elements(ctx, k)
    if wide >= WIDE_ROW_BLOCK:
        return (f"{k.name} already gives each program a {wide}-element block: rows per program is for short "
                f"rows (blocks under {WIDE_ROW_BLOCK}); with wide rows the per-program work is not what limits")
    if why := defaulted_positional_reasons(k.node, [site.call]):
        return why[0]
    n_programs = next((r["grid"][0] for r in ctx.launches
                       if r.get("kernel") == k.name and isinstance(r.get("grid"), list)), None)
    tried = {x.get(param) for x in ctx.tried}
    values = sorted(int(v) for v in (params.get("values") or [2, 4, 8, 16, 32]))
    options = [v for v in values if v not in tried]
    if not options:
        return f"every {param} value was already tried on this base"
    fit = [v for v in options if n_programs and math.ceil(n_programs / v) >= 2 * ctx.num_sms]
    if params.get("form", "tile") != "tile":
        tile_reason: str | None = "the recipe asks for the loop form"
    elif not isinstance(grid, cst.Lambda) and _grid_statement(t, g0) is None:
        tile_reason = "could not find the statement that builds the grid"
    else:
        tile_reason = tile_refusal(k, pid)
    return _Plan(pid_line, pid, grid, g0, n_rows, rows_text, options, fit, tile_reason)


def _host_count(tree: Tree, k: CstKernel, site: CstLaunch, g0: cst.BaseExpression, meta: str) -> str | None:
    """The grid lambda's first axis as the launcher can compute it: every ``meta['KEY']`` replaced by what the
    launch passes for ``KEY`` (``lambda meta: (cdiv(n, meta['BLOCK']),)`` launched with ``BLOCK=block``: the
    program count is ``cdiv(n, (block))``). None where a key is not passed at the launch (an autotuned or
    heuristic value the host never sees) or ``meta`` is used other than subscripted by a string."""
    subs: dict[int, str] = {}
    for n in walk(g0):
        if not (isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == meta):
            continue
        key = (
            literal_value(n.slice[0].slice.value)
            if len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index)
            else NOT_LITERAL
        )
        arg = site.arg_for(k, key) if isinstance(key, str) and not k.autotuned and not k.heuristics else None
        if arg is None:
            return None
        subs[id(n)] = f"({tree.code(arg)})"
    used = sum(isinstance(n, cst.Name) and n.value == meta for n in walk(g0))
    if used != len(subs):
        return None

    class _Sub(cst.CSTTransformer):
        def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
            return cst.parse_expression(subs[id(original_node)]) if id(original_node) in subs else updated_node

    # _Sub's leaves give expressions only, so the visited expression stays one
    return tree.code(cast(cst.BaseExpression, g0.visit(_Sub())))


def _grid_statement(t: Target, g0: cst.CSTNode) -> cst.BaseStatement | None:
    """The top-level statement of the launching function that builds the grid (holds its first axis ``g0``)."""
    f = t.sites[0].function
    return next((s for s in (body_of(f) if f is not None else ()) if any(n is g0 for n in walk(s))), None)


def _choose(plan: _Plan, ctx: RecipeContext, kernel: CstKernel, options: list[int]) -> int:
    fit = [v for v in plan.fit if v in options]
    if plan.tile_reason is None:
        block = _tile_elements(ctx, kernel)
        sized = [v for v in (fit or options) if not block or v * block <= _TILE_ELEMENTS] or [min(options)]
        return max(sized)
    return max(fit) if fit else min(options)


class RowsPerProgram:
    """One row per program -> a [ROWS, BLOCK] row tile, else a loop over ROWS rows; grid divided by ROWS."""

    kind = "rows_per_program"
    card = "rows-per-program"

    def selects(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> bool:
        return row_index(t) is not None

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        t.plan = _plan(t, ctx, params)
        return [t.plan] if isinstance(t.plan, str) else []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan: _Plan = t.plan
        param = str(params.get("param") or "ROWS_PER_PROGRAM")
        options = list(plan.options)
        out: list[dict[str, Any]] = []
        while options and len(out) < 8:
            r = _choose(plan, ctx, t.kernel, options)
            out.append({param: r, "form": "tile"} if plan.tile_reason is None else {param: r})
            options.remove(r)
        return out

    def programs_after(
        self, t: Target, ctx: RecipeContext, point: dict[str, Any], rec: Mapping[str, Any]
    ) -> int | None:
        """The recorded grid's first axis divided by the point's rows (the grid-fill guard, ``grid_fill``)."""
        rows = next((v for n, v in point.items() if n != "form"), None)
        return shrunk(rec, rows) if isinstance(rows, int) else None

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan: _Plan = t.plan
        tree, k, site = t.tree, t.kernel, t.sites[0]
        (param, r), = ((n, v) for n, v in point.items() if n != "form")
        bound = plan.n_rows or "n_rows_rpp"
        var = cst.ensure_type(plan.pid.targets[0].target, cst.Name).value  # row_index: a plain name
        if "form" not in point:
            return rows_as_loop(t, var, param, bound, plan.n_rows, r, plan.tile_reason or "", plan.rows_text)
        desc = plan_row_tile(tree, k, plan.pid, plan.pid_line, param, bound)
        g0_text = tree.code(plan.g0)
        tree.add_params(k.node, ([] if plan.n_rows else ["n_rows_rpp"]) + [f"{param}: tl.constexpr"])
        if not plan.n_rows:
            tree.add_keyword(site.call, "n_rows_rpp", plan.rows_text)
        if isinstance(plan.grid, cst.Lambda):
            meta = plan.grid.params.params[0].name.value if plan.grid.params.params else "META"
            tree.replace(plan.g0, f"triton.cdiv({g0_text}, {meta}[{param!r}])")
            tree.add_keyword(site.call, param, str(r))
        else:
            tree.replace(plan.g0, f"triton.cdiv({g0_text}, {param})")
            tree.add_keyword(site.call, param, param)
            stmt = _grid_statement(t, plan.g0)
            if stmt is None:  # _plan offers the tile form only where it found it
                raise NotApplicable("could not find the statement that builds the grid")
            tree.insert_above(stmt, f"{param} = {r}\n")
        return f"{desc}; {param}={r}, grid {g0_text} -> cdiv({g0_text}, {r})"


_ROWS = applier(RowsPerProgram())
_LAUNCH = applier(LaunchParams())
_HEUR = applier(HeuristicRows())


def apply_rows_per_program(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
    """The recipe: restructure a one-row-per-program kernel, or, where a launched kernel already has the constexpr,
    tune its count like any literal."""
    param = str(params.get("param") or "ROWS_PER_PROGRAM")
    tree = parse_tree(ctx)
    if any(param in k.constexprs and tree.launches_of(k.name) for k in tree.kernels.values()):
        values = sorted(int(v) for v in (params.get("values") or [2, 4, 8, 16, 32]))
        res = _LAUNCH({"search": {param: values}}, ctx)
        return RewriteResult("rows_per_program", res.source, res.diff, res.description, res.applied)
    try:
        return _ROWS(params, ctx)
    except NotApplicable as exc:
        if "depends on the autotuned" not in str(exc):
            raise
        # the row count is a meta-parameter: where a @triton.heuristics sets it, the heuristic is edited instead
        try:
            res = _HEUR({}, ctx)
        except NotApplicable as inner:
            raise NotApplicable(f"{exc}; heuristic rows: {inner}") from None
        return RewriteResult("rows_per_program", res.source, res.diff, res.description, res.applied)
