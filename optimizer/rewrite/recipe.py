"""Applying a recipe: the registered applier of its kind, inside its domain, never a point that cannot change what runs.

The ladder dry-runs a card's recipe with ``can_apply`` (family selection); the proposers apply it with
``apply_recipe`` (one point) or ``apply_recipe_variants`` (several points of one recipe, timed in one round). What
applies each kind is declared in ``optimizer.rewrite.registry``; the domains are ``optimizer.rewrite.domains``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kb.errors import log_error
from kb.models import Recipe
from optimizer.harness import stages
from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.domains import check_domain, check_point
from optimizer.rewrite.effect import effect_reasons
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.registry import APPLIERS

log = logging.getLogger(__name__)

__all__ = ["apply_recipe", "apply_recipe_variants", "can_apply"]


def apply_recipe(recipe: Recipe | dict[str, Any], ctx: RecipeContext, *, compile_check: bool = True) -> RewriteResult:
    """Apply a recipe inside its domain (``optimizer.rewrite.domains``); outside it, raise with the reason.

    A point that cannot change what runs is passed over (``optimizer.rewrite.effect``): always when a decorator
    overrides the launch value it sets, and with ``compile_check`` (and ``ctx.effect_target``) when it compiles to the
    base's PTX. ``can_apply`` (family selection, called for every matched card at every level) skips the compile."""
    r = recipe if isinstance(recipe, Recipe) else Recipe.model_validate(recipe)
    fn = APPLIERS.get(r.kind)
    if fn is None:
        raise NotApplicable(_no_applier(r.kind))
    check_domain(r.kind, r.params, r.requires, r.forbids, ctx)
    noop: list[str] = []
    tried = list(ctx.tried)
    for _ in range(_NOOP_RETRIES):  # a point that cannot change the kernel is passed over for the next one
        try:
            with stages.span("transform"):
                res = fn(r.params, replace(ctx, tried=tried) if noop else ctx)
        except NotApplicable:
            if not noop:
                raise
            break
        check_point(res, ctx, _current_warps(ctx), kind=r.kind, params=r.params)
        with stages.span("effect"):  # the no-op check: compiles base and candidate when compile_check
            why = effect_reasons(ctx.source, res.source, ctx.launches,
                                 target=ctx.effect_target if compile_check else None)
        if not why:
            return res
        noop += why
        tried.append(res.applied)
    raise NotApplicable(f"{r.kind}: " + "; ".join(dict.fromkeys(noop)))


def _no_applier(kind: str) -> str:
    return f"no offline applier for recipe kind {kind!r} (available: {sorted(APPLIERS)})"


#: points of one recipe checked for an effect before the recipe is refused as a no-op
_NOOP_RETRIES = 3


def _current_warps(ctx: RecipeContext) -> int | None:
    for rec in ctx.launches:
        if ctx.hot_kernel is None or rec.get("kernel") == ctx.hot_kernel:
            w = (rec.get("options") or {}).get("num_warps")
            return int(w) if isinstance(w, int) else 4
    return None


def apply_recipe_variants(recipe: Recipe | dict[str, Any], ctx: RecipeContext, limit: int = 8) -> list[RewriteResult]:
    """Up to ``limit`` distinct rewrites of one recipe on one base, best first, to time together in one round.

    A structural transform enumerates its own evidence-bounded points (e.g. block sizes next to the recorded row
    length); any other applier is asked again with the points it already produced marked as tried. Raises
    ``NotApplicable`` (the applier's reason) when not even one rewrite exists.
    """
    r = recipe if isinstance(recipe, Recipe) else Recipe.model_validate(recipe)
    fn = APPLIERS.get(r.kind)
    if fn is None:
        raise NotApplicable(_no_applier(r.kind))
    check_domain(r.kind, r.params, r.requires, r.forbids, ctx)
    with stages.span("transform"):
        out = _variants(fn, r, ctx, limit)
    kept, refused = [], []
    for (
        res
    ) in out:  # every point inside the domain, as apply_recipe checks its one point, and able to change the kernel
        try:
            check_point(res, ctx, _current_warps(ctx), kind=r.kind, params=r.params)
        except NotApplicable as exc:
            refused.append(str(exc))
            continue
        with stages.span("effect"):
            why = effect_reasons(ctx.source, res.source, ctx.launches, target=ctx.effect_target)
        if why:
            refused.append(f"{r.kind}: " + "; ".join(why))
        else:
            kept.append(res)
    if not kept:
        raise NotApplicable(refused[0] if refused else f"{r.kind}: every point was already tried on this base")
    return kept


def _variants(fn: Callable[[dict[str, Any], RecipeContext], RewriteResult], r: Recipe, ctx: RecipeContext,
              limit: int) -> list[RewriteResult]:
    if hasattr(fn, "variants"):
        out = fn.variants(r.params, ctx, limit)
    else:
        out, tried = [], list(ctx.tried)
        while len(out) < limit:
            try:
                res = fn(r.params, replace(ctx, tried=tried))
            except NotApplicable:
                if not out:
                    raise
                break
            if res.applied in tried:
                break
            out.append(res)
            tried.append(res.applied)
    return out


def can_apply(recipe: Recipe | dict[str, Any], ctx: RecipeContext) -> tuple[bool, str]:
    """Whether the recipe applies to the candidate (and the rewrite's description, or why not). The ladder asks this
    of every matched card; a transform that crashes refuses its card with an error id and never fails the level."""
    try:
        res = apply_recipe(recipe, ctx, compile_check=False)
    except NotApplicable as exc:
        return False, str(exc)
    except Exception as exc:  # boundary: a transform (an engine plugin) per card; its bug refuses that card only
        kind = recipe.kind if isinstance(recipe, Recipe) else recipe.get("kind")
        where = f"rewrite transform {kind}"
        return False, f"internal error in the {kind} transform (error {log_error(log, exc, where)}): " \
                      f"{type(exc).__name__}: {exc}"
    return True, res.description
