"""The grid-fill guard: a rewrite that launches fewer programs must not leave more of the GPU idle.

A transform that divides the program count (several rows or a larger block per program, a persistent grid) says,
for one of its points and one recorded launch, how many programs that launch would have after it
(``programs_after(target, ctx, point, record) -> int | None``; None: it cannot tell, or the point keeps the grid).
The engine (``engine._select``) asks ``refusal`` for every point and drops the refused ones; where none is left the
transform is refused for the kernel with each point's reason.

Rule, for every recorded launch of the kernel (each case it ran at) with ``P`` programs before and ``P'`` after, on
a target of ``S`` SMs (``RecipeContext.num_sms``, the static account's device): the point is refused where
``P' < min(P, S)``, i.e.

- a grid at or above one program per SM falls below it (``P >= S > P'``: SMs that had work get none), or
- a grid already below one program per SM is made smaller still (``P' < P < S``: the idle share only grows).

A point that keeps every case at >= ``S`` programs, or does not shrink a case, stays allowed; a transform offering
several factors keeps the smaller ones that pass.

Domain: records whose ``grid`` is a list of integers. A record without one is not judged (nothing is known of its
program count). A kernel none of the recorded launches ran, where other kernels were recorded, is refused: the
cases never launch it, so its program count there is unknown and the rewrite cannot change what they run. No
records at all (a context built without an evaluation): nothing is judged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

__all__ = ["ProgramsAfter", "case_label", "grid_programs", "refusal", "shrunk"]

#: ``programs_after(target, ctx, point, record)``: a launch's program count after the point (None: unknown)
ProgramsAfter = Callable[[Any, Any, dict[str, Any], Mapping[str, Any]], int | None]


def grid_programs(rec: Mapping[str, Any]) -> int | None:
    """Programs one recorded launch started (the product of its grid), None where the grid is not a list of ints."""
    grid = rec.get("grid")
    if not isinstance(grid, (list, tuple)) or not grid:
        return None
    if not all(isinstance(g, int) and not isinstance(g, bool) for g in grid):
        return None
    return math.prod(int(g) for g in grid)


def shrunk(rec: Mapping[str, Any], factor: int | Fraction, axis: int = 0) -> int | None:
    """Programs of ``rec`` after its grid axis ``axis`` is divided by ``factor`` (``triton.cdiv``; a fraction where
    the work per program grows from ``r`` to ``n`` units: ``Fraction(n, r)``)."""
    grid = rec.get("grid")
    if grid_programs(rec) is None or not isinstance(grid, (list, tuple)) or axis >= len(grid) or factor <= 0:
        return None
    dims = [int(g) for g in grid]
    dims[axis] = math.ceil(Fraction(dims[axis]) / factor)
    return math.prod(dims)


def case_label(rec: Mapping[str, Any]) -> str:
    """The case(s) a record was launched at, else its grid."""
    cases = [str(c) for c in rec.get("cases") or []]
    if cases:
        return "case " + ", ".join(cases[:3]) + (f" (+{len(cases) - 3})" if len(cases) > 3 else "")
    return f"the recorded launch with grid {rec.get('grid')}"


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "the point"


def refusal(after: ProgramsAfter, target: Any, ctx: Any, point: dict[str, Any], kernel: str, sms: int) -> str | None:
    """Why ``point`` would leave some recorded case of ``kernel`` with fewer programs than ``min(before, sms)``, or
    why its cases cannot be judged (the kernel is not launched at any); None: allowed."""
    launches = list(ctx.launches or [])
    recs = [r for r in launches if r.get("kernel") == kernel]
    if not recs:
        if launches:
            return (
                f"{_point_text(point)}: {kernel} is not launched at any recorded case, so the programs it would "
                f"launch there are unknown (the recorded launches are of other kernels)"
            )
        return None
    for rec in recs:
        before = grid_programs(rec)
        new = after(target, ctx, point, rec) if before is not None else None
        if before is None or new is None or new >= min(before, sms):
            continue
        how = (
            "below one program per SM"
            if before >= sms
            else f"an already underfilled grid ({sms - before} of {sms} SMs idle) made smaller"
        )
        return (
            f"{_point_text(point)}: at {case_label(rec)} {kernel} would launch {new} programs instead of "
            f"{before} on {sms} SMs ({how})"
        )
    return None
