"""``block_scale``: a block range too small for the GPU becomes a larger one, grid and launch kept in step.

Card ``enlarge-tiny-blocks``. Domain: a kernel with a block range ``tl.arange(0, B)`` whose size ``B`` is a
constexpr the single launch passes as an integer (a literal, or a host variable assigned one literal), below 1024
elements, used either

- on a program axis (``tl.program_id(a) * B + tl.arange(0, B)``, form ``grid``): the host grid's element ``a``
  divides by the same block (``triton.cdiv(E, B)``, ``(E + B - 1) // B``, or ``META['B']`` in a grid lambda;
  a grid element named on the host, ``n_blocks = triton.cdiv(n, 256)``, is followed to its one assignment, so
  buffers sized by that name stay in step), or
- as the step of a loop (``for start in range(0, n, B)``, form ``loop``): the grid does not depend on it.

Before (a naive first translation: 64 fp32 columns, 256 B, per program; a million programs per launch)::

    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    # host: silu_kernel[(M, triton.cdiv(N, 64))](x, y, N, BLOCK=64)

After (one point of the round's search; 1024, 2048, 4096 and 512 elements are timed together)::

    # host: silu_kernel[(M, triton.cdiv(N, 1024))](x, y, N, BLOCK=1024, num_warps=4)

Where the grid reads the block from ``META`` (``lambda META: (cdiv(n, META["B"]),)``, or a named function
``def grid(meta): return ...``), the grid already follows the block and only the block changes, where it is set:
the launch keyword, or -- for a block a decorator decides -- the autotune configs or the heuristic
(``block_decided.py``: configs are added, the key kept; a heuristic becomes ``max(<heuristic>, V)``); a launch
whose block a decorator decides may pass ``*args`` (its arguments are not read).

Every load and store addressed through the block range must be masked (a larger block reaches past the end
otherwise), and the block literal may appear in the launching function only where the grid divides by it or as
another kernel's launch keyword (a partial buffer sized ``cdiv(n, 256)`` elsewhere would fall out of step): refused
otherwise, with the reason. Also refused: ``tl.dot`` kernels (``dot_tile_search`` tunes tiles), autotune
configs that are not spelled out (built at run time), blocks already >= 1024 elements (autotune configs: >=
4096), a loop whose recorded bound already fits in one block, and a grid-form block whose recorded grid
would fall below 2 programs per SM (sizes are capped there); the grid-fill guard (``grid_fill``) also checks every
recorded case, not only the first: no case may fall below one program per SM, nor a grid already below it shrink.
``num_warps`` follows the block (4 up to 1024 elements, 8 above), so each thread keeps 4-16 elements in registers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import libcst as cst

from optimizer.kernel.flow import dependents
from optimizer.rewrite.block_decided import (
    added_configs,
    config_block_values,
    decided_by,
    edit_configs,
    edit_heuristic,
    heuristic_reason,
)
from optimizer.rewrite.common import grid_node, launch_record, meta_grid_of, meta_keys, single_site_reasons
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.effect import decorator_knobs
from optimizer.rewrite.engine import Target
from optimizer.rewrite.grid_fill import grid_programs
from optimizer.rewrite.tree import LOOP_RANGES, arg_value, call_name, range_args, walk

__all__ = ["BlockScale", "int_literal"]

#: blocks at or above this many elements are not "tiny": the transform refuses them
_LARGE = 1024
#: with ``cause:serial_tail`` evidence a grid-form block is scaled up to here (fewer partials for the one-program pass)
_SERIAL_LARGE = 8192
#: an autotuned block gets configs up to this many elements (the autotuner keeps the best per key)
_MAX_ADDED = 4096
#: the most elements one program's 2-D tile may hold after scaling (registers: 8 warps x 32 lanes x 64)
_MAX_TILE = 16384
#: a scaled grid keeps at least this many programs per SM (a sum_dim 512-program grid scaled to 128 programs,
#: one per SM or less, ran 0.15x)
_MIN_WAVES = 2


@dataclass
class _Plan:
    block: str  # the constexpr
    current: int
    form: str  # "grid" | "loop"
    value_node: cst.BaseExpression | None  # what sets the block at the launch (the keyword's literal, or the host
    # assignment's); None where a decorator decides it
    decided: str | None = None  # "autotune" | "heuristics": the decorator that sets the block (block_decided.py)
    configs: list[dict[str, Any]] = field(default_factory=list)  # the autotune configs, where they decide it
    grid_literals: list[tuple[cst.Integer, int]] = field(default_factory=list)  # grid literals and their offset from B
    other_tile: int = 1  # the product of the other constexpr ranges' sizes (a 2-D tile)
    loop_bound: int | None = None


def int_literal(node: cst.BaseExpression | None) -> int | None:
    return int(node.value, 0) if isinstance(node, cst.Integer) else None


def _block_names(t: Target) -> list[str]:
    out = []
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.Call) and call_name(n) == "tl.arange" and len(n.args) == 2:
            end = n.args[1].value
            if isinstance(end, cst.Name) and end.value in t.kernel.constexprs and end.value not in out:
                out.append(end.value)
    return out


def _launched_value(t: Target, name: str) -> tuple[int | None, cst.BaseExpression | None, str]:
    """(value, node to edit, why not) for the constexpr ``name`` at the single launch."""
    site = t.sites[0]
    arg = site.arg_for(t.kernel, name)
    if arg is None:
        return None, None, f"the launch does not pass {name}"
    if (v := int_literal(arg)) is not None:
        return v, arg, ""
    if isinstance(arg, cst.Name):
        assigns = t.tree.assignments(site.function, arg.value)
        if len(assigns) == 1 and (v := int_literal(assigns[0].value)) is not None:
            return v, assigns[0].value, ""
    return None, None, f"{name}={t.tree.code(arg)} is not an integer literal or a host variable assigned one"


def _block_value(t: Target, ctx: RecipeContext, name: str) -> tuple[int | None, cst.BaseExpression | None, str]:
    """(value, node to edit, why not) for the constexpr ``name``: passed at the launch (``_launched_value``), or
    decided by a decorator (``block_decided``: the value is the recorded launch's, when one was recorded)."""
    decided = decided_by(t, name)
    if decided is None and t.kernel.autotuned and t.sites[0].arg_for(t.kernel, name) is None:
        why = config_block_values(t, name)[1] or f"no autotune config sets {name}"
        return None, None, f"{name} is not passed at the launch, so the autotuner sets it, and {why}"
    if decided is None:
        if any(a.star for a in t.sites[0].call.args):
            return None, None, "the launch passes *args / **kwargs"
        return _launched_value(t, name)
    why = config_block_values(t, name)[1] if decided == "autotune" else heuristic_reason(t, name)
    recorded = (launch_record(t, ctx).get("constexprs") or {}).get(name)
    return (recorded if isinstance(recorded, int) else None), None, why


def _form(t: Target, name: str) -> str | None:
    pids = set(t.facts.pid.values())
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
            sides = (n.left, n.right)
            if any(isinstance(s, cst.Name) and s.value == name for s in sides):
                other = n.right if isinstance(n.left, cst.Name) and n.left.value == name else n.left
                if (isinstance(other, cst.Name) and other.value in pids) or call_name(other) == "tl.program_id":
                    return "grid"
        if isinstance(n, cst.For) and call_name(n.iter) in LOOP_RANGES:
            args = range_args(n.iter)
            if len(args) >= 3 and isinstance(args[2].value, cst.Name) and args[2].value.value == name:
                return "loop"
    return None


def _grid_literals(t: Target, name: str, value: int | None,
                   host: str | None) -> tuple[list[tuple[cst.Integer, int]], bool]:
    """Literals in the grid that carry the block (``cdiv(E, B)``: offset 0; ``(E + B - 1) // B``: -1), and whether
    the grid divides by the block at all: by the literal, by the host variable ``host`` that holds it, or by
    ``META[name]`` in a grid over the meta-parameters (``common.meta_grid_of``: a lambda or a named function)."""
    if (meta := meta_grid_of(t)) is not None:
        key, elements = meta
        divisors = [n.args[1].value for e in elements for n in walk(e)
                    if isinstance(n, cst.Call) and call_name(n) in ("triton.cdiv", "cdiv") and len(n.args) == 2]
        divisors += [n.right for e in elements for n in walk(e)
                     if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.FloorDivide)]
        return [], any(name in meta_keys(d, key) for d in divisors)
    g = grid_node(t.sites[0], t.tree)
    scopes: list[cst.CSTNode] = [g]  # a grid element named on the host (`n_blocks = triton.cdiv(n, 512)`) counts too
    for el in g.elements if isinstance(g, (cst.Tuple, cst.List)) else []:
        if isinstance(el.value, cst.Name) and len(a := t.tree.assignments(t.sites[0].function, el.value.value)) == 1:
            scopes.append(a[0].value)

    def is_block(d: cst.BaseExpression) -> bool:
        return int_literal(d) == value or (host is not None and isinstance(d, cst.Name) and d.value == host)

    found: list[tuple[cst.Integer, int]] = []
    divides = False
    for n in (m for scope in scopes for m in walk(scope)):
        cdiv = isinstance(n, cst.Call) and call_name(n) in ("triton.cdiv", "cdiv") and len(n.args) == 2
        if cdiv and isinstance(n, cst.Call) and is_block(n.args[1].value):
            divides = True
            if isinstance(n.args[1].value, cst.Integer):
                found.append((n.args[1].value, 0))
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.FloorDivide) and is_block(n.right):
            divides = True
            if isinstance(n.right, cst.Integer):
                found.append((n.right, 0))
                found += [(m, -1) for m in walk(n.left)
                          if isinstance(m, cst.Integer) and value is not None and int_literal(m) == value - 1]
    return found, divides


def _unmasked(t: Target) -> list[str]:
    """Loads/stores addressed through a block range without a mask."""
    seeds = set()
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.Assign) and any(call_name(c) == "tl.arange" for c in walk(n.value)):
            seeds |= {tg.target.value for tg in n.targets if isinstance(tg.target, cst.Name)}
    ranged = dependents(t.kernel.node.body, seeds) | seeds
    out = []
    for a in t.facts.accesses:
        if a.op not in ("tl.load", "tl.store") or a.mask is not None:
            continue
        ptr = arg_value(a.node, "pointer", 0)
        names = {m.value for m in walk(ptr) if isinstance(m, cst.Name)} if ptr is not None else set()
        if names & ranged or "tl.arange" in a.pointer:
            out.append(f"{a.op}({a.pointer}) is not masked: a larger block would reach past the end")
    return out


def _stray_literals(t: Target, value: int, used: list[tuple[cst.Integer, int]],
                    value_node: cst.BaseExpression) -> list[str]:
    """Other uses of the block literal in the launching function (they would fall out of step)."""
    fn = t.sites[0].function
    if fn is None:
        return []
    mine = {id(n) for n, _ in used} | {id(value_node)}
    # another kernel's launch keyword (its own BLOCK=128) is that kernel's block, not this one's
    mine |= {id(a.value) for s in t.tree.launches if s is not t.sites[0] for a in s.call.args if a.keyword is not None}
    return [f"the literal {value} also appears in `{t.tree.code(t.tree.statement_of(fn, n) or n)}`"
            for n in walk(fn) if isinstance(n, cst.Integer) and int_literal(n) == value and id(n) not in mine][:2]


class BlockScale:
    """A tiny constexpr block range -> a larger one (grid and launch edited together), 3-4 sizes in one round."""

    kind = "block_scale"
    card = "enlarge-tiny-blocks"

    def _plan(self, t: Target, ctx: RecipeContext) -> tuple[_Plan | None, list[str]]:
        out = single_site_reasons(t, meta_grid=True, decorated=True, star_args=True)
        if t.facts.dots:
            out.append("has tl.dot: its tiles are tuned by dot_tile_search, not by a block-range scale")
        if out:
            return None, out
        names = _block_names(t)
        if not names:
            return None, ["no tl.arange(0, B) with a constexpr size B"]
        reasons: list[str] = []
        launched = {name: _block_value(t, ctx, name) for name in names}
        sized = {name: v for name, (v, _node, _why) in launched.items()}
        reasons += [why for _v, _node, why in launched.values() if why]
        # a one-program pass loops once per program of this kernel (serial_tail): blocks up to _SERIAL_LARGE still
        # shorten it, whatever the per-program work
        large = _SERIAL_LARGE if "cause:serial_tail" in ctx.evidence else _LARGE
        for name in names:
            v, node, why = launched[name]
            decided = decided_by(t, name)
            if why or (v is None and decided is None):
                continue
            configs = config_block_values(t, name)[0] if decided == "autotune" else []
            top = max(int(c["kwargs"][name]) for c in configs) if configs else v
            form = _form(t, name)
            limit = (_MAX_ADDED if decided == "autotune" else large) if form == "grid" else _LARGE
            if top is not None and top >= limit:
                reasons.append(f"{name}={top} is already >= {limit} elements"
                               + (" (the largest of its autotune configs)" if configs else ""))
                continue
            if form is None:
                reasons.append(f"{name} sizes neither a program's block (pid * {name}) nor a loop step "
                               f"(range(.., .., {name}))")
                continue
            plan = _Plan(name, v or 0, form, node, decided, configs)  # 0: decided at run time, not recorded
            model = max(configs, key=lambda c: int(c["kwargs"][name])) if configs else None
            for other in names:  # an autotuned tile: the other blocks as its largest-block config sets them
                size = model["kwargs"].get(other) if model is not None else sized[other]
                if other != name and isinstance(size, int) and size > 0:
                    plan.other_tile *= size
            arg = t.sites[0].arg_for(t.kernel, name) if decided is None else None
            host = arg.value if isinstance(arg, cst.Name) else None
            if form == "grid":
                lits, divides = _grid_literals(t, name, v, host)
                if not divides:
                    reasons.append(f"the grid {t.launches[0].grid} does not divide by {name}: programs x {name} would "
                                   "no longer cover the range")
                    continue
                plan.grid_literals = lits if host is None else []
            else:
                plan.loop_bound = self._loop_bound(t, ctx, name)
                if plan.loop_bound is not None and v is not None and plan.loop_bound <= v:
                    reasons.append(f"the loop bound ({plan.loop_bound}) already fits in one {name}={v} block")
                    continue
            stray = _stray_literals(t, v, plan.grid_literals, node) if host is None and node is not None and v else []
            masks = _unmasked(t)
            if stray or masks:
                reasons += stray + masks
                continue
            if (cap := self._grid_cap(t, ctx, plan)) is not None and cap <= plan.current:
                grid = launch_record(t, ctx).get("grid")  # the next block name (a loop tile) may still scale
                reasons.append(
                    f"the recorded grid {grid} has too few programs to divide: a {plan.block} above "
                    f"{plan.current} would leave fewer than {_MIN_WAVES * ctx.num_sms} programs ({_MIN_WAVES} per SM)"
                )
                continue
            return plan, []
        return None, reasons or ["no block range to scale"]

    @staticmethod
    def _loop_bound(t: Target, ctx: RecipeContext, name: str) -> int | None:
        args = launch_record(t, ctx).get("ir_args") or {}
        for n in walk(t.kernel.node.body):
            if isinstance(n, cst.For) and call_name(n.iter) in LOOP_RANGES:
                a = range_args(n.iter)
                if len(a) >= 3 and isinstance(a[2].value, cst.Name) and a[2].value.value == name:
                    bound = a[1].value
                    if isinstance(bound, cst.Name) and isinstance(args.get(bound.value), int):
                        return int(args[bound.value])
        return None

    @staticmethod
    def _grid_cap(t: Target, ctx: RecipeContext, plan: _Plan) -> int | None:
        """The largest block that keeps the recorded grid at >= ``_MIN_WAVES`` programs per SM (a grid-form block
        only: a larger block divides the program count). None when no grid was recorded."""
        grid = launch_record(t, ctx).get("grid")
        if plan.form != "grid" or plan.current == 0 or not (
            isinstance(grid, (list, tuple)) and grid and all(isinstance(g, int) for g in grid)
        ):
            return None
        programs = 1
        for g in grid:
            programs *= int(g)
        floor = _MIN_WAVES * max(1, int(ctx.num_sms))
        fits = plan.current * programs // floor  # programs x current / new >= floor  <=>  new <= this
        return 1 << (fits.bit_length() - 1) if fits > 0 else 0

    def _cap(self, t: Target, ctx: RecipeContext, plan: _Plan) -> int:
        cap = _MAX_TILE // max(1, plan.other_tile)
        if plan.loop_bound:
            cap = min(cap, 1 << (plan.loop_bound - 1).bit_length())
        if (grid_cap := self._grid_cap(t, ctx, plan)) is not None:
            cap = min(cap, grid_cap)
        return cap

    def _added(self, t: Target, ctx: RecipeContext, plan: _Plan) -> list[int]:
        """Autotuned: 2, 4 and 8 times the configs' largest block, up to ``_MAX_ADDED`` and the caps."""
        top = max(int(c["kwargs"][plan.block]) for c in plan.configs)
        return [top << i for i in (1, 2, 3) if top << i <= min(_MAX_ADDED, self._cap(t, ctx, plan))]

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan, why = self._plan(t, ctx)
        if plan is not None and plan.decided == "autotune" and not self._added(t, ctx, plan):
            return [f"no block above the autotune configs' largest {plan.block} fits the caps (a tile of at most "
                    f"{_MAX_TILE} elements, {_MIN_WAVES} programs per SM on the recorded grid)"]
        if plan is not None and plan.decided != "autotune" and not why and not self.points(t, ctx, params):
            return [f"no {plan.block} above {plan.current} fits the caps (the other tile axes hold {plan.other_tile} "
                    f"elements of at most {_MAX_TILE} per tile, {_MIN_WAVES} programs per SM on the recorded grid)"]
        return why

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        if plan.decided == "autotune":  # one point: the autotuner times the added configs beside the author's
            return [{plan.block: self._added(t, ctx, plan)}]
        values = [int(v) for v in (params.get("values") or [1024, 2048, 4096, 512])]
        if "cause:serial_tail" in ctx.evidence and plan.form == "grid":
            # a one-program pass loops once per program of this kernel: larger blocks shorten that serial loop
            values = sorted(
                {*(v for v in values if v >= 2048), 8192, 16384}, key=lambda v: (v != max(4096, 4 * plan.current), -v)
            )
        if plan.form == "loop" and plan.other_tile > 1 and not params.get("values_exact"):
            # a 2-D loop tile ([rows, BLOCK]): aim the tile, not the step, at 1024-8192 elements
            values = sorted(
                {x // plan.other_tile for x in (2048, 4096, 1024, 8192) if x // plan.other_tile > plan.current},
                key=lambda v: (v * plan.other_tile != 2048, v),
            )
        cap = self._cap(t, ctx, plan)
        keep = [v for v in values if plan.current < v <= cap and v & (v - 1) == 0]
        if not keep:  # the row or the tile caps every listed size: the largest power of two that fits
            top = 1 << (cap.bit_length() - 1) if cap >= 1 else 0  # a cap under one element leaves no size
            keep = [top] if top > plan.current else []
        return [{plan.block: v, "num_warps": 4 if v * plan.other_tile <= 1024 else 8} for v in keep]

    def programs_after(
        self, t: Target, ctx: RecipeContext, point: dict[str, Any], rec: Mapping[str, Any]
    ) -> int | None:
        """Grid form: the recorded programs x recorded / new block (None: loop form, or configs the autotuner picks)."""
        plan, _ = self._plan(t, ctx)
        new = point.get(plan.block) if plan is not None else None
        if plan is None or plan.form != "grid" or plan.decided == "autotune" or not isinstance(new, int):
            return None
        cur = (rec.get("constexprs") or {}).get(plan.block, plan.current)
        if not isinstance(cur, int) or cur <= 0 or new <= cur:
            return None
        return math.ceil(Fraction(p * cur, new)) if (p := grid_programs(rec)) is not None else None

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = self._plan(t, ctx)
        assert plan is not None
        where = ("the grid divides by it" if plan.form == "grid" else "the loop steps by it")
        if plan.decided == "autotune":
            values = [int(v) for v in point[plan.block]]
            how = edit_configs(t, added_configs(plan.configs, plan.block, values, plan.other_tile))
            return (f"{t.kernel.name}: autotune configs {plan.block}={values} {how}; key kept, the autotuner times "
                    f"them beside its own ({where})")
        new = int(point[plan.block])
        if plan.decided == "heuristics":
            how = edit_heuristic(t, plan.block, new)
        else:
            assert plan.value_node is not None  # a block no decorator decides is set at the launch (_block_value)
            t.tree.replace(plan.value_node, str(new))
            how = f"{plan.current} -> {new}"
        for lit, offset in plan.grid_literals:
            t.tree.replace(lit, str(new + offset))
        warps = f"num_warps={point['num_warps']}"
        if "num_warps" in decorator_knobs(t.tree, t.kernel):
            warps = "num_warps as its autotune configs set them"
        else:
            t.tree.add_keyword(t.sites[0].call, "num_warps", str(point["num_warps"]))
        return (f"{t.kernel.name}: {plan.block} {how} elements per "
                f"{'program' if plan.form == 'grid' else 'loop step'} ({where}), {warps}")
