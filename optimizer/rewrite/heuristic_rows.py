"""``heuristic_rows``: more rows per program where a ``@triton.heuristics`` sets the row count (card
``rows-per-program``, the form ``rows_per_program`` refuses: its program count lives in the grid's ``META``).

A row kernel that already tiles ``[ROWS, COLS]`` (``tl.arange(0, BLOCK_SIZE_BATCH)[:, None]`` against
``tl.arange(0, BLOCK_SIZE_FEAT)[None, :]``) whose grid is ``lambda META: (cdiv(n_rows, META["BLOCK_SIZE_BATCH"]),)``
gets its row count from a heuristic; attorch's gives one row per program for every row of 64 columns or more, so
a 768-column bf16 row (1.5 KB) is all a program does. The row count is decided in the heuristic, so it is edited
there (never overridden from the launch, where the heuristic would overwrite it)::

    @triton.heuristics({"BLOCK_SIZE_BATCH": BLOCK_SIZE_BATCH_heuristic,
                        "BLOCK_SIZE_FEAT": lambda args: next_power_of_2(args["feat_dim"])})

becomes::

    @triton.heuristics({"BLOCK_SIZE_BATCH": lambda args: max(
                            BLOCK_SIZE_BATCH_heuristic(args),
                            min(64, max(1, 2048 // next_power_of_2(args["feat_dim"])))),
                        "BLOCK_SIZE_FEAT": lambda args: next_power_of_2(args["feat_dim"])})

so a program owns about ``TILE`` elements (2048, then 4096) whatever the row width; rows that already fill
the tile keep the heuristic's value (``max``). The kernel's masks already bound the rows (its heuristic gives several
rows for narrow features), the grid divides by ``META[...]``, so nothing else changes; an autotuner over the same
kernel re-tunes warps for the new tile.

Domain: a launched kernel whose grid is a ``lambda META`` dividing its first axis by ``META[R]``; ``R`` a constexpr
set by an inline ``@triton.heuristics({...})`` entry (a lambda, or the name of a function of the arguments); the
kernel ranges over ``tl.arange(0, R)`` and exactly one other constexpr ``tl.arange(0, C)`` and builds 2-D tiles
(``[:, None]``); ``C`` is set by a heuristic lambda (its body is inlined) or passed at the launch (read from the
arguments). Points: the ``TILE`` values whose row count grows on a recorded launch (``C`` and ``R`` as recorded)
while leaving at least two programs per SM on its recorded grid; all three without records. The grid-fill guard
(``grid_fill``) then drops a point that leaves some recorded case below one program per SM (or shrinks a grid
already below it), and refuses a kernel no recorded case launches. Refused otherwise, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import libcst as cst

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.grid_fill import shrunk
from optimizer.rewrite.launch_knobs import NOT_LITERAL, grid_expr, literal_value
from optimizer.rewrite.tree import arg_value, call_name, dotted, skip_ids, walk

__all__ = ["HeuristicRows", "heuristic_entries", "renamed_body"]

#: elements of a program's tile the points aim at: on the H200 rows per program gained with tiles up to 4096
#: elements and was neutral or slower from 8192 on (``rows_per_program.WIDE_ROW_BLOCK``)
_TILES = (2048, 4096)
_CAP = 64  # rows per program at most


def heuristic_entries(t: Target) -> dict[str, cst.DictElement]:
    """Constexpr -> its entry in an inline ``@triton.heuristics({...})`` dict of the kernel."""
    out: dict[str, cst.DictElement] = {}
    for d in t.kernel.node.decorators:
        call = d.decorator
        if isinstance(call, cst.Call) and dotted(call.func).endswith("heuristics") and call.args \
                and isinstance(call.args[0].value, cst.Dict):
            for el in call.args[0].value.elements:
                key = literal_value(el.key) if isinstance(el, cst.DictElement) else NOT_LITERAL
                if isinstance(el, cst.DictElement) and isinstance(key, str):
                    out[key] = el
    return out


def _meta_keys(g0: cst.CSTNode, meta: str) -> list[str]:
    keys = []
    for n in walk(g0):
        if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value == meta \
                and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index):
            v = literal_value(n.slice[0].slice.value)
            if isinstance(v, str):
                keys.append(v)
    return keys


def _aranged(t: Target) -> list[str]:
    """Constexprs the kernel ranges over: ``tl.arange(0, NAME)``."""
    out = []
    for n in walk(t.kernel.node.body):
        if isinstance(n, cst.Call) and call_name(n) == "tl.arange":
            end = arg_value(n, "end", 1)
            if isinstance(end, cst.Name) and end.value in t.kernel.constexprs and end.value not in out:
                out.append(end.value)
    return out


def renamed_body(lam: cst.Lambda, param: str) -> str:
    """A heuristic lambda's body with its parameter renamed to ``param``."""
    old = lam.params.params[0].name.value
    skip = skip_ids(lam.body)

    class _R(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:  # noqa: N802
            return cst.Name(param) if original_node.value == old and id(original_node) not in skip else updated_node

    body = lam.body.visit(_R())
    assert isinstance(body, cst.CSTNode)
    return cst.Module([]).code_for_node(body).strip()


def _plan(t: Target) -> tuple[dict[str, Any] | None, list[str]]:
    if len(t.sites) != 1:
        return None, [f"launched from {len(t.sites)} places"]
    grid, _ = grid_expr(t.tree, t.sites[0])
    if not isinstance(grid, cst.Lambda) or not grid.params.params:
        return None, ["the grid is not a lambda over META (the row count is not a meta-parameter)"]
    meta = grid.params.params[0].name.value
    body = grid.body
    if not isinstance(body, (cst.Tuple, cst.List)) or not body.elements:
        return None, ["the grid lambda does not return a tuple"]
    entries = heuristic_entries(t)
    rows = [k for k in _meta_keys(body.elements[0].value, meta) if k in entries and k in t.kernel.constexprs]
    if len(rows) != 1:
        return None, [f"the grid's first axis divides by no {meta}[...] that an inline @triton.heuristics sets"]
    r = rows[0]
    el = entries[r]
    if not isinstance(el.value, (cst.Lambda, cst.Name)) or (
            isinstance(el.value, cst.Lambda) and len(el.value.params.params) != 1):
        return None, [f"the heuristic of {r} is neither a one-argument lambda nor a function name"]
    ranged = _aranged(t)
    cols = [c for c in ranged if c != r]
    bad = []
    if r not in ranged:
        bad.append(f"the kernel does not range over tl.arange(0, {r}) (its rows are not a tile axis)")
    if len(cols) != 1:
        bad.append(f"not exactly one column block besides {r} ({', '.join(cols) or 'none'})")
    if not any(isinstance(n, cst.Subscript) and any(isinstance(m, cst.Name) and m.value == "None"
                                                    for e in n.slice for m in walk(e)) for n in walk(t.kernel.node)):
        bad.append("no 2-D tile ([:, None]): the kernel does not hold several rows")
    if any(isinstance(n, cst.Call) and call_name(n) == "tl.dot" for n in walk(t.kernel.node)):
        bad.append("a tl.dot kernel: its tiles are tuned by block sizes")
    if bad:
        return None, bad
    c = cols[0]
    param = el.value.params.params[0].name.value if isinstance(el.value, cst.Lambda) else "args"
    col_heur = entries[c].value if c in entries else None
    if isinstance(col_heur, cst.Lambda) and len(col_heur.params.params) == 1:
        col_text = renamed_body(col_heur, param)
    elif c not in entries and t.sites[0].arg_for(t.kernel, c) is not None:
        col_text = f"{param}[{c!r}]"
    else:
        return None, [f"the column block {c} is neither a heuristic lambda nor passed at the launch"]
    old = renamed_body(el.value, param) if isinstance(el.value, cst.Lambda) else f"{el.value.value}({param})"
    return {"rows": r, "cols": c, "entry": el, "param": param, "old": old, "col_text": col_text}, []


class HeuristicRows:
    """A row count set by @triton.heuristics -> the heuristic gives short rows several rows per program."""

    kind = "heuristic_rows"
    card = "rows-per-program"

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        plan, bad = _plan(t)
        if plan is not None and not self.points(t, ctx, params):
            bad = [f"no tile size gives a recorded launch more rows per program ({plan['rows']} as recorded) with "
                   f"two programs per SM left"]
        return bad

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        plan, _ = _plan(t)
        if plan is None:
            return []
        tiles = [int(v) for v in (params.get("tiles") or _TILES)]
        recs = [r for r in ctx.launches if r.get("kernel") == t.kernel.name]
        out = []
        for tile in tiles:
            grows = not recs
            for rec in recs:
                consts = rec.get("constexprs") or {}
                c, r = consts.get(plan["cols"]), consts.get(plan["rows"])
                grid = rec.get("grid")
                if not (isinstance(c, int) and isinstance(r, int) and c > 0):
                    continue
                new = max(r, min(_CAP, max(1, tile // c)))
                programs = grid[0] * r if isinstance(grid, list) and grid and isinstance(grid[0], int) else None
                if new > r and (programs is None or math.ceil(programs / new) >= 2 * ctx.num_sms):
                    grows = True
            if grows:
                out.append({"TILE": tile})
        return out

    def programs_after(
        self, t: Target, ctx: RecipeContext, point: dict[str, Any], rec: Mapping[str, Any]
    ) -> int | None:
        """Programs of a recorded launch once the heuristic gives ``TILE // C`` rows (the grid-fill guard): its rows
        (``grid[0] x R``, as recorded) over the new row count."""
        plan, _ = _plan(t)
        consts = rec.get("constexprs") or {}
        c, r = (consts.get(plan["cols"]), consts.get(plan["rows"])) if plan is not None else (None, None)
        if not (isinstance(c, int) and isinstance(r, int) and c > 0 and r > 0):
            return None
        new = max(r, min(_CAP, max(1, int(point["TILE"]) // c)))
        return shrunk(rec, Fraction(new, r)) if new > r else None

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        plan, _ = _plan(t)
        assert plan is not None
        p, tile = plan["param"], int(point["TILE"])
        new = (f"lambda {p}: max({plan['old']}, min({_CAP}, max(1, {tile} // ({plan['col_text']}))))")
        el: cst.DictElement = plan["entry"]
        t.tree.replace(el.value, new)
        return (f"{t.kernel.name}: @triton.heuristics {plan['rows']} -> max(its heuristic, {tile} // {plan['cols']} "
                f"rows, at most {_CAP}): short rows get several rows per program (a {tile}-element tile); the grid "
                f"divides by META[{plan['rows']!r}] as before")
