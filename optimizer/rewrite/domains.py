"""Recipe domains: what a recipe needs from the kernel's facts and evidence before it may be applied.

A recipe is refused outside its domain with the reason, and the refusal is recorded as evidence. Two sources:

- the card's own ``recipe.requires`` / ``recipe.forbids`` (evidence tokens: ``code:<feature>``,
  ``ir:<signature>``, ``cause:<cause>``; ``a|b`` means either), and
- built-in rules per recipe kind, for what no card may override:
  * a tile search (``BLOCK_M``/``BLOCK_N``/``BLOCK_K`` in an autotune space, or a launch-parameter space of tile
    names only) needs a ``tl.dot``; in a mixed launch space a tile name may never change a block of a dot-less kernel;
  * ``num_stages`` needs a loop to pipeline (``code:inner_loop``);
  * never fewer warps on a spilling kernel (``ir:register_spill`` or ``cause:register_spills``): checked on the
    point the applier chose, so a search may still go up.
"""

from __future__ import annotations

from typing import Any

from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.errors import NotApplicable

__all__ = ["check_domain", "check_point", "domain_violations", "evidence_tokens", "round_tokens"]

_TILE_NAMES = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K")


def evidence_tokens(ctx: RecipeContext) -> set[str]:
    return set(ctx.evidence or ())


def _searched(kind: str, params: dict[str, Any]) -> set[str]:
    if kind == "launch_params":
        return set((params.get("search") or {}).keys())
    if kind == "autotune":
        names: set[str] = set()
        for cfg in params.get("configs") or []:
            names |= set((cfg.get("kwargs") or {}).keys())
            names |= {k for k in ("num_warps", "num_stages") if k in cfg}
        return names
    return set()


def _has(tokens: set[str], req: str) -> bool:
    return any(alt.strip() in tokens for alt in req.split("|"))


def _tokens(ctx: RecipeContext) -> set[str]:
    """The context's evidence tokens; with none recorded, the code features of its source (always checkable)."""
    toks = evidence_tokens(ctx)
    if not any(t.startswith("code:") for t in toks) and ctx.source:
        from optimizer.kernel.features import extract_features

        toks |= {f"code:{t}" for t in extract_features(ctx.source, launches=ctx.launches).tokens}
    return toks


def check_domain(
    kind: str, params: dict[str, Any], requires: list[str], forbids: list[str], ctx: RecipeContext
) -> None:
    """Raise ``NotApplicable`` naming the failed precondition. No evidence known (a bare context): only the
    card's rules that can be checked from the source are skipped, never the built-in ones that can."""
    toks = _tokens(ctx)
    searched = _searched(kind, params)
    tiles = searched & set(_TILE_NAMES)
    if kind == "autotune" and tiles and "code:tl.dot" not in toks:
        raise NotApplicable(
            f"domain: a tile search ({', '.join(sorted(tiles))}) needs a tl.dot kernel; this kernel has none"
        )
    if kind == "launch_params" and tiles and not searched - tiles and "code:tl.dot" not in toks:
        raise NotApplicable(
            f"domain: a tile search ({', '.join(sorted(tiles))}) needs a tl.dot kernel; this kernel has none"
        )
    if "num_stages" in searched and not searched - {"num_stages"} and "code:inner_loop" not in toks:
        raise NotApplicable("domain: num_stages pipelines a loop, and this kernel has no loop")
    for req in requires:
        if not _has(toks, req):
            raise NotApplicable(f"domain: the recipe requires {req}, which the evidence does not show")
    for bad in forbids:
        if _has(toks, bad):
            raise NotApplicable(f"domain: the recipe is contraindicated by {bad}")


def check_point(res: RewriteResult, ctx: RecipeContext, current_warps: int | None, *, kind: str = "",
                params: dict[str, Any] | None = None) -> None:
    """Refuse a chosen point that lowers num_warps on a kernel with spill evidence, or that changed a block size
    through a dot-tile name (BLOCK_K standing in for a row block) on a kernel without tl.dot."""
    toks = evidence_tokens(ctx)
    tiles = _searched(kind, params or {}) & set(_TILE_NAMES)
    if tiles and "code:tl.dot" not in (toks if any(t.startswith("code:") for t in toks) else _tokens(ctx)):
        changed_blocks = [k for k in (res.applied or {}) if "BLOCK" in k.upper()]
        if changed_blocks:
            raise NotApplicable(
                f"domain: {', '.join(sorted(tiles))} are dot-tile names; on a kernel without tl.dot they "
                f"must not change {', '.join(changed_blocks)}"
            )
    spilling = bool(toks & {"ir:register_spill", "cause:register_spills"})
    new = (res.applied or {}).get("num_warps")
    if spilling and isinstance(new, int) and current_warps is not None and new < current_warps:
        raise NotApplicable(f"domain: never fewer warps on a spilling kernel ({current_warps} -> {new} refused)")


def round_tokens(rnd: Any) -> set[str]:
    """Evidence tokens a recorded round had when its recipe was chosen (code features, IR signatures, causes)."""
    toks: set[str] = set()
    for ev in rnd.evidence:
        if ev.kind == "code_features":
            toks |= {f"code:{t}" for t in ev.data.get("features", [])}
        elif ev.kind == "ir_signature":
            toks.add(f"ir:{ev.reference}")
        elif ev.kind == "cause_decision" and ev.data.get("decided"):
            toks.add(f"cause:{ev.reference}")
    return toks


def domain_violations(traj: Any) -> list[str]:
    """Rounds of a trajectory whose recipe was applied outside its domain, judged on the round's own evidence."""
    out = []
    for rnd in traj.rounds:
        rw = rnd.rewrite
        if rw is None or not rw.recipe.get("kind"):
            continue
        toks = round_tokens(rnd)
        if not any(t.startswith("code:") for t in toks):
            continue  # no recorded code features: nothing to judge against
        ctx = RecipeContext(source="", evidence=sorted(toks))
        try:
            check_domain(rw.recipe["kind"], rw.recipe.get("params") or {}, list(rw.recipe.get("requires") or []),
                         list(rw.recipe.get("forbids") or []), ctx)
            warps = [(r.get("options") or {}).get("num_warps", 4) for ev in rnd.evidence if ev.kind == "validation"
                     for r in ev.data.get("launches", [])[:1]]
            check_point(RewriteResult(rw.recipe["kind"], "", "", "", dict(rw.recipe.get("applied") or {})), ctx,
                        warps[0] if warps else None, kind=rw.recipe["kind"], params=rw.recipe.get("params") or {})
        except NotApplicable as exc:
            out.append(f"{traj.problem.name} round {rnd.index} ({rw.family}): {exc}")
    return out
