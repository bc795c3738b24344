"""``column_tiles``: a row kernel that is element-wise along its row (one program per row, the whole row in one
power-of-two block) becomes a 2-D grid of column tiles (card ``split-wide-rows``).

Liger-style GLU and activation kernels size the block as ``next_power_of_2(n_cols)``: an 11008-wide bf16 row runs
a 16384-lane block with a third of its lanes masked off, and a 16-warp program whose instruction issue, not HBM,
sets the time. Nothing in such a body needs the whole row in one program, so the row is cut into tiles of C
columns. Before::

    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < n_cols)
    tl.store(Y + row * stride + cols, f(x), mask=cols < n_cols)
    # host: kernel[(n_rows,)](X, Y, stride, n_cols, BLOCK=triton.next_power_of_2(n_cols), num_warps=16)

After (one point, C = 2048)::

    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    # host: kernel[(n_rows, triton.cdiv(n_cols, min(triton.next_power_of_2(n_cols), 2048)))](
    #           ..., BLOCK=min(triton.next_power_of_2(n_cols), 2048), num_warps=4)

The block stays whatever the host computed when that is narrower than C (one tile per row, as before), so every
size the launcher meets keeps its meaning. Domain (``preconditions`` names each failure): one launch site with a
one-element tuple grid; only ``tl.program_id(0)``; exactly one ``tl.arange(0, B)`` with B a constexpr that the
kernel uses nowhere else; the launch passes B; no reduction, scan, ``tl.dot``, loop or atomic (each would need the
whole row, or its result would be repeated per tile); every store addressed through the column range and every
load or store through it masked; a mask compares the column range with a kernel argument the launch passes (the
column count the host grid divides); no autotune or heuristics (those set B themselves); recorded blocks (when
launches were recorded) wider than the smallest tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from optimizer.kernel.flow import ATOMICS, dependents
from optimizer.rewrite.common import grid_node, launch_record, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.tree import arg_value, call_name, walk

__all__ = ["ColumnTiles"]

#: column tile sizes, best first (2048 fits an 11-14k row in 6-7 tiles with <= 10% of the lanes masked off)
TILES = (2048, 1024, 4096)
_SCANS = {"tl.cumsum", "tl.cumprod", "tl.associative_scan", "tl.sort", "tl.histogram", "tl.flip"}


@dataclass
class _Plan:
    block: str  # the constexpr sizing the column range
    arange: cst.Call  # its tl.arange(0, B)
    block_arg: cst.BaseExpression  # what the launch passes for B
    ncols_arg: cst.BaseExpression  # what the launch passes for the argument the column mask compares against
    recorded: list[int]  # B at the recorded launches
    grid: cst.Tuple | cst.List  # the launch's one-element grid, as the rewrite edits it (``grid_node``)


def _arange_block(call: cst.Call, constexprs: list[str]) -> str | None:
    if call_name(call) != "tl.arange" or len(call.args) != 2:
        return None
    start, end = call.args[0].value, call.args[1].value
    if isinstance(start, cst.Integer) and start.value == "0" and isinstance(end, cst.Name) and end.value in constexprs:
        return end.value
    return None


def _bound_param(t: Target, ranged: set[str], arange: cst.Call) -> str | None:
    """The kernel argument a mask compares the column range with (``cols < n_cols``), else None."""
    for n in walk(t.kernel.node.body):
        if not (isinstance(n, cst.Comparison) and len(n.comparisons) == 1):
            continue
        op = n.comparisons[0].operator
        left, right = n.left, n.comparisons[0].comparator
        if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            left, right = right, left
        elif not isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            continue
        is_cols = left is arange or (isinstance(left, cst.Name) and left.value in ranged)
        if is_cols and isinstance(right, cst.Name) and right.value in t.kernel.params:
            return right.value
    return None


class ColumnTiles:
    """A whole-row block of an element-wise row kernel -> a (rows, column tiles) grid with a C-column block."""

    kind = "column_tiles"
    card = "split-wide-rows"

    def _plan(self, t: Target, ctx: RecipeContext) -> tuple[_Plan | None, list[str]]:
        out = single_site_reasons(t)
        f = t.facts
        if t.launches and t.launches[0].grid_elements is not None and len(t.launches[0].grid_elements) != 1:
            out.append(f"grid {t.launches[0].grid} already has {len(t.launches[0].grid_elements)} axes (a one-row-"
                       "per-program 1-D grid is the domain)")
        if set(f.program_axes) - {0}:
            out.append("the kernel reads tl.program_id of a second axis")
        if f.dots:
            out.append("has tl.dot: its tiles belong to dot_tile_search")
        if f.reductions:
            out.append(f"reduces along the row ({', '.join(r for r, _ in f.reductions[:3])}): every tile would need "
                       "the whole row")
        if f.loops:
            out.append("has a loop: only a straight-line element-wise body is cut into column tiles")
        calls = [n for n in walk(t.kernel.node.body) if isinstance(n, cst.Call)]
        if scans := sorted({call_name(c) for c in calls if call_name(c) in _SCANS}):
            out.append(f"{', '.join(scans)} mixes columns: the row cannot be cut into tiles")
        if any(a.op in ATOMICS for a in f.accesses):
            out.append("has atomics: a tile split would repeat or reorder them")
        ranges = [(c, b) for c in calls if (b := _arange_block(c, t.kernel.constexprs))]
        others = [c for c in calls if call_name(c) == "tl.arange" and not _arange_block(c, t.kernel.constexprs)]
        if len(ranges) != 1 or others:
            out.append(f"{len(ranges) + len(others)} tl.arange calls (one tl.arange(0, B) over the row, B a "
                       "constexpr, is the domain)")
        if not any(isinstance(n, (cst.Import, cst.ImportFrom)) and "triton" in t.tree.code(n).split()
                   for n in walk(t.tree.module)):
            out.append("the module does not import triton (the new grid calls triton.cdiv)")
        if out:
            return None, out
        arange, block = ranges[0]
        uses = [n for n in walk(t.kernel.node.body) if isinstance(n, cst.Name) and n.value == block]
        if len(uses) != 1:
            return None, [f"{block} is used {len(uses) - 1} more time(s) besides tl.arange(0, {block}) (it would no "
                          "longer be the row width)"]
        seeds = set()
        for n in walk(t.kernel.node.body):
            if isinstance(n, cst.Assign) and any(m is arange for m in walk(n.value)):
                seeds |= {tg.target.value for tg in n.targets if isinstance(tg.target, cst.Name)}
        ranged = dependents(t.kernel.node.body, seeds) | seeds
        for a in f.accesses:
            ptr = arg_value(a.node, "pointer", 0)
            names = {m.value for m in walk(ptr) if isinstance(m, cst.Name)} if ptr is not None else set()
            through = bool(names & ranged) or any(m is arange for m in walk(ptr)) if ptr is not None else False
            if a.op == "tl.store" and not through:
                out.append(f"tl.store({a.pointer}) is not addressed by the column range: every tile would write it")
            if through and a.mask is None:
                out.append(f"{a.op}({a.pointer}) is not masked: a tile past the row's end would reach out of bounds")
        bound = _bound_param(t, ranged, arange)
        if bound is None:
            out.append("no mask compares the column range with a kernel argument (the column count the grid needs)")
        site = t.sites[0]
        block_arg = site.arg_for(t.kernel, block)
        if block_arg is None:
            out.append(f"the launch does not pass {block}")
        ncols_arg = site.arg_for(t.kernel, bound) if bound else None
        if bound and ncols_arg is None:
            out.append(f"the launch does not pass {bound}")
        grid = grid_node(site, t.tree)
        if not isinstance(grid, (cst.Tuple, cst.List)):  # a grid variable the launcher also uses elsewhere
            out.append(f"the grid variable `{t.tree.code(grid)}` is used beyond this launch (its tuple cannot be "
                       "edited for the launch alone)")
        rec = launch_record(t, ctx)
        recorded = [int(v) for r in ctx.launches if r.get("kernel") == t.kernel.name
                    for v in [{**(r.get("ir_args") or {}), **(r.get("constexprs") or {})}.get(block)]
                    if isinstance(v, int)]
        if rec and recorded and max(recorded) <= min(TILES):
            out.append(f"the recorded {block} (at most {max(recorded)}) already fits one {min(TILES)}-column tile")
        if out or block_arg is None or ncols_arg is None or not isinstance(grid, (cst.Tuple, cst.List)):
            return None, out
        return _Plan(block, arange, block_arg, ncols_arg, recorded, grid), []

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        return self._plan(t, ctx)[1]

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        tiles = [int(v) for v in (params.get("values") or TILES)]
        if plan.recorded:
            tiles = [v for v in tiles if v < max(plan.recorded)] or tiles[:1]
        return [{"COLUMN_TILE": v, "num_warps": 4 if v <= 2048 else 8} for v in tiles]

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        c = int(point["COLUMN_TILE"])
        site = t.sites[0]
        width = f"min({t.tree.code(plan.block_arg)}, {c})"
        ncols = t.tree.code(plan.ncols_arg)
        t.tree.replace(plan.arange, f"tl.program_id(1) * {plan.block} + tl.arange(0, {plan.block})")
        rows = t.tree.code(plan.grid.elements[0].value)  # _plan: one element (grid_elements)
        t.tree.replace(plan.grid, f"({rows}, triton.cdiv({ncols}, {width}))")
        t.tree.replace(plan.block_arg, width)
        t.tree.add_keyword(site.call, "num_warps", str(point["num_warps"]))
        return (f"{t.kernel.name}: one row per program -> (rows, column tiles) grid; {plan.block} = "
                f"min(host value, {c}) columns per program, num_warps={point['num_warps']}")
