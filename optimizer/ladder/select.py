"""Card matching and the family-selection half of the escalation tests (tests 2 and 3), shared by all levels.

``match_cards`` asks the KB's quick-match index with what a level knows (symptom tokens plus text), drops
cards that an anti-signal contraindicates, and dry-runs each recipe on the candidate (offline proposer).
``choose_family`` applies test (2): ONE family stands out when its count of level-relevant matched symptoms
beats every other eligible card (or, tied on that, its fused score leads by 15%). Test (3) is per level.
"""

from __future__ import annotations

from kb.models import Symptoms
from kb.models.search import QuickMatchQuery, SearchHit
from optimizer.ladder.types import CardRef, LadderContext, card_ref
from optimizer.proposers.recipes import RecipeContext, can_apply

__all__ = ["GENERIC_TOKENS", "choose_family", "match_cards", "recipe_context", "relevant", "tried_points"]

_MARGIN = 1.15


def tried_points(ctx: LadderContext, card_id: str) -> list[dict]:
    """The recipe points already applied for ``card_id`` on this base candidate in earlier rounds."""
    sha = ctx.source_sha
    out = []
    for rnd in ctx.history:
        rw = rnd.rewrite
        if rw is not None and rw.family == card_id and rw.recipe.get("base") == sha:
            out.append(dict(rw.recipe.get("applied") or {}))
    return out


def recipe_context(ctx: LadderContext, card_id: str, bottleneck: str = "unknown") -> RecipeContext:
    ev = ctx.evaluation
    return RecipeContext(
        source=ctx.source, filename=ctx.candidate.name, bottleneck=bottleneck, launches=list(ev.launches) if ev else [],
        tried=tried_points(ctx, card_id), backend=ctx.backend, hot_kernel=ctx.cache.get("hot_kernel"),
    )


def match_cards(ctx: LadderContext, symptoms: Symptoms, text: str, *, bottleneck: str = "unknown", top_k: int = 5) -> list[CardRef]:
    query = QuickMatchQuery(symptoms=symptoms, text=text[:4000], backend=ctx.kb_backend, top_k=top_k,  # type: ignore[arg-type]
                            exclude=sorted(ctx.exclude_cards))
    hits: list[SearchHit] = ctx.kb.quick_match(query)
    refs = [card_ref(h) for h in hits if h.card.id not in ctx.exclude_cards]
    forbidden = _contraindicated(ctx, symptoms, text)
    out = []
    for r in refs:
        if r.kind != "pattern":
            continue
        if r.id in forbidden or (r.recipe and r.recipe.get("kind") in forbidden):
            r.applicable, r.applicability_note = False, "contraindicated by an anti-signal"
        elif r.recipe is not None:
            ok, note = can_apply(r.recipe, recipe_context(ctx, r.id, bottleneck))
            r.applicable, r.applicability_note = ok, note
        else:
            r.applicable, r.applicability_note = None, "no machine-applicable recipe"
        out.append(r)
    return out


def _contraindicated(ctx: LadderContext, symptoms: Symptoms, text: str) -> set[str]:
    """Card ids / recipe kinds forbidden by anti-signal cards whose trigger symptoms are present."""
    from kb.models.search import CardFilter, SearchQuery

    if not symptoms.tokens():
        return set()
    try:
        hits = ctx.kb.search(SearchQuery(text=(text or " ".join(sorted(symptoms.tokens())))[:4000], top_k=5,
                                         filter=CardFilter(kinds=["anti_signal"], backends=[ctx.kb_backend])))  # type: ignore[list-item]
    except Exception:
        return set()
    out: set[str] = set()
    mine = symptoms.tokens()
    for h in hits:
        card = h.card
        if card.kind == "anti_signal" and card.symptoms.tokens() and card.symptoms.tokens() <= mine:
            out |= set(card.contraindicated)  # type: ignore[union-attr]
    return out


#: Tokens nearly every kernel has: they never count as evidence for one family over another.
GENERIC_TOKENS = frozenset({"code:tl.load", "code:tl.program_id", "code:tl.arange", "code:single_pass_kernel",
                            "code:masked_store", "code:tl.store"})


def relevant(ref: CardRef, prefixes: tuple[str, ...]) -> list[str]:
    return [s for s in ref.matched_symptoms if s.startswith(prefixes) and s not in GENERIC_TOKENS]


def choose_family(ctx: LadderContext, refs: list[CardRef], prefixes: tuple[str, ...]) -> tuple[CardRef | None, bool, str]:
    """Test (2): is the next change narrowed to ONE evidence-backed family? Returns (card, passed, notes)."""
    if ctx.require_recipe:
        eligible = [r for r in refs if r.applicable]
        why_none = "no matched card has a recipe that applies to this candidate"
    else:
        eligible = [r for r in refs if r.applicable is not False]
        why_none = "no matched card"
    eligible = [r for r in eligible if relevant(r, prefixes)]
    if not eligible:
        return None, False, why_none + f" with {'/'.join(p.rstrip(':') for p in prefixes)} evidence"
    eligible.sort(key=lambda r: (-len(relevant(r, prefixes)), -r.score))
    top = eligible[0]
    if len(eligible) == 1:
        return top, True, f"only {top.id} is eligible"
    second = eligible[1]
    n1, n2 = len(relevant(top, prefixes)), len(relevant(second, prefixes))
    if n1 > n2:
        return top, True, f"{top.id} matches {n1} evidence symptoms, next best {second.id} {n2}"
    if top.score >= _MARGIN * second.score:
        return top, True, f"{top.id} and {second.id} tie on symptoms; {top.id} leads on score {top.score:.4f} vs {second.score:.4f}"
    return None, False, f"{top.id} and {second.id} are equally supported ({n1} symptoms, scores {top.score:.4f}/{second.score:.4f})"
