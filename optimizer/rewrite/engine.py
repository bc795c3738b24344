"""Structural transforms: preconditions over kernel facts and evidence, then a rewrite of the syntax tree.

A ``Transform`` names its recipe kind and its card, lists the reasons it does not apply
(``preconditions(target, ctx, params) -> [reason, ...]``; empty means it applies), enumerates its parameter
points (``points``), and edits the tree for one point (``rewrite``). ``applier(transform)`` turns it into an
entry of ``optimizer.rewrite.registry.APPLIERS``: the ladder and the offline proposer call it through
``apply_recipe`` / ``can_apply`` unchanged, a refusal is a ``NotApplicable`` whose message carries every failed
precondition (recorded as evidence), and the kernel chosen is the profiled hot kernel, else the most launched, the
first whose preconditions hold. A transform with a ``selects(target, ctx, params) -> bool`` method picks its kernel
itself instead (the first launched kernel it selects, in that order): that kernel's preconditions then decide, and
another kernel is never tried in its place (the launch knobs tune the hot kernel or refuse).
A transform that launches fewer programs also has ``programs_after(target, ctx, point, record) -> int | None``: its
points pass the grid-fill guard (``optimizer.rewrite.grid_fill``: no recorded case may fall below one program per
SM, nor an underfilled grid shrink); a kernel whose every point is refused there is refused with those reasons.
Transforms compose because each one starts from the candidate it is given, the best so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import libcst as cst

from optimizer.kernel.analyze import kernel_facts, launch_facts
from optimizer.kernel.model import KernelFacts, LaunchFacts
from optimizer.rewrite.context import RecipeContext, RewriteResult, finish, unified_diff
from optimizer.rewrite.errors import NotApplicable
from optimizer.rewrite.grid_fill import refusal as fill_refusal
from optimizer.rewrite.tree import CstKernel, CstLaunch, Tree

__all__ = ["Applier", "Target", "Transform", "TransformApplier", "Variants", "VariantsApplier", "applier", "parse_tree",
           "prepared_first", "targets"]


@dataclass
class Target:
    """One kernel of the candidate with its facts and launch sites, on a tree that collects the edits."""

    tree: Tree
    kernel: CstKernel
    facts: KernelFacts
    sites: list[CstLaunch]
    launches: list[LaunchFacts]
    #: what the transform's preconditions worked out on this target, for its rewrite to use (set by the transform)
    plan: Any = None


class Transform(Protocol):
    kind: str
    card: str

    def preconditions(self, target: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[str]:
        """Every reason the transform does not apply to ``target`` (empty: it applies)."""
        ...

    def points(self, target: Target, ctx: RecipeContext, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Parameter points, best first (3-8 where the transform has parameters, else one)."""
        ...

    def rewrite(self, target: Target, ctx: RecipeContext, point: dict[str, Any]) -> str:
        """Edit ``target.tree`` for ``point``; return the description of the change."""
        ...


def parse_tree(ctx: RecipeContext) -> Tree:
    try:
        tree = Tree(ctx.source)
    except cst.ParserSyntaxError as exc:
        raise NotApplicable(f"candidate does not parse: {str(exc).splitlines()[0]}") from None
    if not tree.kernels:
        raise NotApplicable("no @triton.jit kernel in the candidate")
    return tree


def targets(tree: Tree, ctx: RecipeContext) -> list[Target]:
    """Launched kernels, hot kernel first, then by recorded launch count, then in launch order."""
    launched = [s.kernel for s in tree.launches]
    counts: dict[str, int] = {}
    for rec in ctx.launches:
        counts[rec.get("kernel", "")] = counts.get(rec.get("kernel", ""), 0) + int(rec.get("launches", 1))
    order = sorted(dict.fromkeys(launched), key=lambda n: (n != ctx.hot_kernel, -counts.get(n, 0), launched.index(n)))
    out = []
    for name in order:
        k = tree.kernels[name]
        sites = tree.launches_of(name)
        out.append(Target(tree, k, kernel_facts(tree, k), sites, [launch_facts(tree, s) for s in sites]))
    return out


def _select(tr: Transform, ctx: RecipeContext, params: dict[str, Any]) -> tuple[Target, list[dict[str, Any]]]:
    tree = parse_tree(ctx)
    cands = targets(tree, ctx)
    if not cands:
        raise NotApplicable("no kernel of the candidate is launched")
    select = getattr(tr, "selects", None)
    if select is not None:  # the transform names its kernel (the first it selects); that kernel's preconditions decide
        chosen = next((t for t in cands if select(t, ctx, params)), None)
        if chosen is None:
            raise NotApplicable("no launched kernel satisfies the recipe's preconditions")
        cands = [chosen]
    refusals = []
    for t in cands:
        failed = tr.preconditions(t, ctx, params)
        if not failed:
            pts, failed = _filled(tr, t, ctx, tr.points(t, ctx, params))
            if pts or not failed:
                return t, pts
        refusals.append(f"{t.kernel.name}: " + "; ".join(failed))
    raise NotApplicable(f"{tr.kind} does not apply ({' | '.join(refusals)})")


def _filled(
    tr: Transform, t: Target, ctx: RecipeContext, pts: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The points the grid-fill guard keeps (``grid_fill.refusal``: a transform with ``programs_after``) and the
    reasons of those it refuses."""
    after = getattr(tr, "programs_after", None)
    if after is None:
        return pts, []
    kept, refused = [], []
    for p in pts:
        why = fill_refusal(after, t, ctx, p, t.kernel.name, ctx.num_sms)
        if why is None:
            kept.append(p)
        else:
            refused.append(why)
    return kept, refused


def _one(
    tr: Transform, ctx: RecipeContext, point: dict[str, Any], params: dict[str, Any], t: Target | None = None
) -> RewriteResult:
    if t is None:
        t, _ = _select(tr, ctx, params)  # a fresh tree: edits of one point never leak into another
    desc = tr.rewrite(t, ctx, point)
    return finish(tr.kind, ctx, t.tree.render(), desc, point)


Applier = Callable[[dict[str, Any], RecipeContext], RewriteResult]
#: every point of a recipe not yet tried on this base, at most ``limit`` (``recipe.apply_recipe_variants``)
Variants = Callable[[dict[str, Any], RecipeContext, int], list[RewriteResult]]


class TransformApplier:
    """An ``APPLIERS`` entry built here: a callable applier that names the transform it applies (``transform``; None
    for a wrapped applier that is not a transform's), documented as that transform."""

    def __init__(self, apply: Applier, transform: Transform | None, doc: str | None) -> None:
        self._apply = apply
        self.transform = transform
        self.__doc__ = doc

    def __call__(self, params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
        return self._apply(params, ctx)


class VariantsApplier(TransformApplier):
    """A ``TransformApplier`` that also gives several points at once: ``variants`` (an applier without it is asked
    again per point, ``recipe._variants``)."""

    def __init__(self, apply: Applier, transform: Transform | None, doc: str | None, variants: Variants) -> None:
        super().__init__(apply, transform, doc)
        self.variants = variants


def applier(tr: Transform) -> VariantsApplier:
    """The ``APPLIERS`` entry for ``tr``: the first point not yet tried on this base."""

    def apply(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
        t, pts = _select(tr, ctx, params)
        fresh = [p for p in pts if p not in ctx.tried]
        if not fresh:
            raise NotApplicable(f"every {tr.kind} point ({len(pts)}) was already tried on this base")
        return _one(tr, ctx, fresh[0], params, t)

    def variants(params: dict[str, Any], ctx: RecipeContext, limit: int) -> list[RewriteResult]:
        _t, pts = _select(tr, ctx, params)
        return [_one(tr, ctx, p, params) for p in pts if p not in ctx.tried][:limit]

    return VariantsApplier(apply, tr, type(tr).__doc__, variants)


def prepared_first(fn: Applier, trigger: str, prepare: Callable[[str], tuple[str, str]], label: str = "") -> Applier:
    """Wrap an applier: when it refuses with a message containing ``trigger``, rewrite the source with ``prepare``
    (source -> (new source, description)) and apply it to the result -- one rewrite, one diff against the candidate
    as given. A refusal of ``prepare`` keeps both reasons (``label`` introduces the second)."""

    def prepared(ctx: RecipeContext, exc: NotApplicable) -> tuple[RecipeContext, str]:
        if trigger not in str(exc):
            raise exc
        try:
            src, why = prepare(ctx.source)
        except NotApplicable as inner:
            raise NotApplicable(f"{exc}; {label}{inner}") from None
        return replace(ctx, source=src), why

    def rebase(r: RewriteResult, ctx: RecipeContext, why: str) -> RewriteResult:
        return RewriteResult(r.kind, r.source, unified_diff(ctx.source, r.source, ctx.filename, ctx.new_filename),
                             f"{why}; {r.description}", r.applied)

    def apply(params: dict[str, Any], ctx: RecipeContext) -> RewriteResult:
        try:
            return fn(params, ctx)
        except NotApplicable as exc:
            new_ctx, why = prepared(ctx, exc)
        return rebase(fn(params, new_ctx), ctx, why)

    transform = fn.transform if isinstance(fn, TransformApplier) else None
    if not isinstance(fn, VariantsApplier):  # a composite applier without its own variants is asked again per point
        return TransformApplier(apply, transform, fn.__doc__)
    inner = fn.variants

    def variants(params: dict[str, Any], ctx: RecipeContext, limit: int) -> list[RewriteResult]:
        try:
            return inner(params, ctx, limit)
        except NotApplicable as exc:
            new_ctx, why = prepared(ctx, exc)
        return [rebase(r, ctx, why) for r in inner(params, new_ctx, limit)]

    return VariantsApplier(apply, transform, fn.__doc__, variants)
