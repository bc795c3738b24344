"""``launch_params``: one point of a launch search per round (``{"search": {name: [values]}}``).

The names are launch options (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``) or literal constexprs of
the kernel (``BLOCK_SIZE``), located by ``optimizer.rewrite.launch_knobs``; names aliasing one block are searched
once, and a dot-tile name (``BLOCK_M`` ...) never stands in for the block of a kernel without ``tl.dot``.
``next_point`` is the evidence-guided search: among untried points it picks the one nearest the current
configuration (fewest parameters changed, smallest step), preferring the direction the bottleneck class suggests
(more warps and larger blocks when memory-bound, fewer when occupancy-limited). ``points`` continues that walk, so
a round can time several neighbours together.

Domain: the profiled hot kernel (else the most launched, else the first launched one; never another in its place)
with at least one searched name it can tune. Refused: an empty search; no searched name is a launch option or a
literal constexpr of the kernel (an autotuned kernel has none: its configs own them); every point already tried.
"""

from __future__ import annotations

import itertools
from typing import Any

from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.engine import Target
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.launch_knobs import Knob, alias, find_knob, mentions_dot

__all__ = ["PREF", "LaunchParams", "next_point"]

_DOT_TILE_NAMES = frozenset({"BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"})
#: points ``points`` walks ahead (``apply_recipe_variants``' default limit)
_WALK = 8

#: the direction each bottleneck class prefers per kind of knob (+1 up, -1 down, 0 either)
PREF: dict[str, dict[str, int]] = {
    "memory_bound": {"warps": 1, "block": 1, "stages": 1},
    "latency_bound": {"warps": 1, "block": -1, "stages": 1},
    "occupancy_limited": {"warps": -1, "block": -1, "stages": -1},
    "compute_bound": {"warps": 1, "block": 1, "stages": 1},
    "sync_bound": {"warps": -1, "block": 1, "stages": 0},
    "scalar_bound": {"warps": 0, "block": 1, "stages": 0},
    "launch_bound": {"warps": 0, "block": 1, "stages": 0},
}


def _kind_of(name: str) -> str:
    return {"num_warps": "warps", "num_stages": "stages"}.get(name, "block")


def _sort_key(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, (int, float)) else (1, str(v))


def next_point(space: dict[str, list[Any]], current: dict[str, Any], tried: list[dict[str, Any]],
               bottleneck: str) -> dict[str, Any]:
    """The untried point nearest ``current``: fewest parameters changed, smallest step, preferred direction first."""
    names = list(space)
    seen = {tuple(sorted(t.items())) for t in tried} | {tuple(sorted(current.items()))}
    pref = PREF.get(bottleneck, {})

    def score(point: dict[str, Any]) -> tuple[int, float]:
        changed = [n for n in names if point[n] != current.get(n)]
        cost = 0.0
        for n in changed:
            vals = sorted({*space[n], *([current[n]] if current.get(n) is not None else [])}, key=_sort_key)
            cur = current.get(n)
            i_new = vals.index(point[n])
            i_cur = vals.index(cur) if cur in vals else i_new
            cost += abs(i_new - i_cur)
            direction = 1 if _sort_key(point[n]) > _sort_key(cur) else -1
            want = pref.get(_kind_of(n), 0)
            if want and direction != want:
                cost += 0.5
        return len(changed), cost

    candidates = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(space[n] for n in names))]
    candidates = [c for c in candidates if tuple(sorted(c.items())) not in seen]
    if not candidates:
        raise NotApplicable("every point of the search space was already tried on this base")
    return min(candidates, key=score)


def _knobs(t: Target, ctx: RecipeContext, search: dict[str, list[Any]]) -> dict[str, Knob]:
    """Searched name -> its knob, in the recipe's order; a name aliasing a block already found is dropped."""
    k = t.kernel
    knobs: dict[str, Knob] = {}
    has_dot = mentions_dot(k)
    for n in sorted(search, key=lambda n: alias(k, n) != n):  # exact names first, then aliases
        if not has_dot and n.upper() in _DOT_TILE_NAMES and alias(k, n) != n:
            continue  # a dot-tile name never stands in for a dot-less kernel's block (domains.check_point)
        kb = find_knob(t.tree, k, t.sites, n)
        if kb is not None and all(other.name != kb.name for other in knobs.values()):
            knobs[n] = kb  # several searched names (BLOCK_M, BLOCK_N) may alias one block: it is searched once
    knobs = {n: knobs[n] for n in search if n in knobs}
    rec = next((r for r in ctx.launches if r.get("kernel") == k.name), {})
    for kb in knobs.values():
        if kb.heuristic:  # the heuristic's value for the recorded case
            kb.current = (rec.get("options") or {}).get(kb.name, {"num_warps": 4, "num_stages": 3}.get(kb.name))
    return knobs


def _search(params: dict[str, Any]) -> dict[str, list[Any]]:
    search: dict[str, list[Any]] = dict(params.get("search") or {})
    if not search:
        raise NotApplicable("launch_params needs a non-empty 'search' mapping")
    return search


class LaunchParams:
    """Launch options and literal constexprs of the hot kernel, one evidence-guided point at a time."""

    kind = "launch_params"
    card = "launch-param-search"

    def selects(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> bool:
        _search(params)
        return True  # the hot kernel (the first target) or nothing

    def preconditions(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        search = _search(params)
        if not _knobs(t, ctx, search):
            return [f"none of {sorted(search)} is a launch option or a literal constexpr of {t.kernel.name}"]
        return []

    def points(self, t: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        search = _search(params)
        knobs = _knobs(t, ctx, search)
        space = {kb.name: list(search[n]) for n, kb in knobs.items()}
        current = {kb.name: kb.current for kb in knobs.values()}
        out = [next_point(space, current, ctx.tried, ctx.bottleneck)]
        while len(out) < _WALK:
            try:
                out.append(next_point(space, current, [*ctx.tried, *out], ctx.bottleneck))
            except NotApplicable:
                break
        return out

    def rewrite(self, t: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        knobs = _knobs(t, ctx, {name: [] for name in point})  # the point names the knobs themselves
        changes = []
        for kb in knobs.values():
            if point[kb.name] != kb.current:
                kb.set(t.tree, point[kb.name])
                changes.append(f"{kb.name} {kb.current} -> {point[kb.name]}" + (
                    " (in its @triton.heuristics, which sets it)" if kb.heuristic else ""))
        why = f" (direction preferred for {ctx.bottleneck})" if ctx.bottleneck in PREF else ""
        return f"{t.kernel.name}: " + ", ".join(changes) + why
