"""Card matching and the family-selection half of the escalation tests (tests 2 and 3), shared by all levels.

``match_cards`` asks the KB's quick-match index with what a level knows (symptom tokens plus text), drops
cards that an anti-signal contraindicates, and dry-runs each recipe on the candidate (offline proposer).
``choose_family`` applies test (2) over the families not set aside by this session's history (see
``spent``): ONE family stands out when it alone is untried on this base, or its evidence count / weighted score
beats every other eligible card (the score by 15%). Test (3) is per level.
"""

from __future__ import annotations

from kb.errors import LadderError
from kb.models import Symptoms
from kb.models.search import QuickMatchQuery, SearchHit
from optimizer.ir.gap_account import H200 as ACCOUNT_DEVICE
from optimizer.ladder import keys
from optimizer.ladder.types import CardRef, LadderContext, card_ref
from optimizer.rewrite.context import RecipeContext
from optimizer.rewrite.recipe import can_apply

__all__ = [
    "GENERIC_TOKENS",
    "choose_family",
    "match_cards",
    "nonimproving_tries",
    "recipe_context",
    "relevant",
    "spent",
    "tried_points",
]

_MARGIN = 1.15
#: Weight bonus for a card that names the known bottleneck class (a bonus in the ranking, never a hard filter).
_AGREE_BONUS = 0.5
_NOT_IMPROVED = frozenset({"neutral", "regressed", "failed"})


def tried_points(ctx: LadderContext, card_id: str) -> list[dict]:
    """The recipe points already applied for ``card_id`` on this base candidate in earlier rounds."""
    sha = ctx.source_sha
    out = []
    for rnd in ctx.history:
        rw = rnd.rewrite
        if rw is not None and rw.family == card_id and rw.recipe.get("base") == sha:
            out.append(dict(rw.recipe.get("applied") or {}))
            out += [
                dict(p) for p in rw.recipe.get("screened") or [] if p != rw.recipe.get("applied")
            ]  # lost the screen
    return out


def recipe_context(ctx: LadderContext, card_id: str, bottleneck: str = "unknown") -> RecipeContext:
    ev = ctx.evaluation
    tol = getattr(ctx.problem, "tolerances", {}).get("float32")
    feats = ctx.cache.get(keys.FEATURES)
    return RecipeContext(
        source=ctx.source,
        filename=ctx.candidate.name,
        bottleneck=bottleneck,
        launches=list(ev.launches) if ev else [],
        tried=tried_points(ctx, card_id),
        backend=ctx.backend,
        hot_kernel=ctx.cache.get(keys.HOT_KERNEL),
        tolerance={"atol": tol.atol, "rtol": tol.rtol} if tol is not None else None,
        tolerances={
            k: {"atol": v.atol, "rtol": v.rtol} for k, v in (getattr(ctx.problem, "tolerances", None) or {}).items()
        },
        evidence=sorted(
            {
                *(f"ir:{x}" for x in ctx.known_signatures()),
                *(f"code:{t}" for t in (feats.tokens if feats is not None else [])),
                *(f"cause:{f.cause}" for r in ctx.results for f in r.findings if f.confidence >= 0.5),
            }
        ),
        effect_target=ctx.ir_target if ctx.ir_target.startswith("cuda") else None,
        # the SMs of the device the static account models for a CUDA target (its wave_quantization finding), so a
        # rewrite's grid-fill guard and the account agree on what underfills
        num_sms=ACCOUNT_DEVICE.sms if ctx.ir_target.startswith("cuda") else RecipeContext.num_sms,
    )


def match_cards(
    ctx: LadderContext, symptoms: Symptoms, text: str, *, bottleneck: str = "unknown", top_k: int = 5
) -> list[CardRef]:
    query = QuickMatchQuery(symptoms=symptoms, text=text[:4000], backend=ctx.kb_backend, top_k=top_k,
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
                                         filter=CardFilter(kinds=["anti_signal"], backends=[ctx.kb_backend])))
    except LadderError:  # a KB that cannot search forbids nothing here (its errors are the tree's)
        return set()
    out: set[str] = set()
    mine = symptoms.tokens()
    for h in hits:
        card = h.card
        if card.kind == "anti_signal" and card.symptoms.tokens() and card.symptoms.tokens() <= mine:
            out |= set(card.contraindicated)
    return out


#: Tokens nearly every kernel has: they never count as evidence for one family over another.
GENERIC_TOKENS = frozenset({"code:tl.load", "code:tl.program_id", "code:tl.arange", "code:single_pass_kernel",
                            "code:masked_store", "code:tl.store"})


def relevant(ref: CardRef, prefixes: tuple[str, ...]) -> list[str]:
    return [s for s in ref.matched_symptoms if s.startswith(prefixes) and s not in GENERIC_TOKENS]


def nonimproving_tries(ctx: LadderContext) -> dict[str, int]:
    """Family -> rounds on the current base whose rewrite did not improve (neutral, regressed or failed).

    A family that regressed on two bases of this session and never improved counts as spent on every base: its
    points are a search over one knob, and a new base rarely changes the knob's answer (without this rule a
    scale-softmax session tried rows-per-program five times over three bases, 23 s a round, regressing each time)."""
    sha = ctx.source_sha
    out: dict[str, int] = {}
    regressed: dict[str, set[str]] = {}
    improved: set[str] = set()
    for rnd in ctx.history:
        rw = rnd.rewrite
        if rw is None:
            continue
        if rnd.outcome in _NOT_IMPROVED and rw.recipe.get("base", sha) == sha:
            out[rw.family] = out.get(rw.family, 0) + 1
        if rnd.outcome == "improved":
            improved.add(rw.family)
        elif rnd.outcome == "regressed":
            regressed.setdefault(rw.family, set()).add(str(rw.recipe.get("base", "")))
    for fam, bases in regressed.items():
        if len(bases) >= 2 and fam not in improved:
            out[fam] = max(out.get(fam, 0), 2)
    return out


def spent(ref: CardRef, tries: int) -> bool:
    """A family that did not improve is set aside once it did so twice, or once with no untried recipe point left."""
    return tries >= 2 or (tries >= 1 and not ref.applicable)


def choose_family(ctx: LadderContext, refs: list[CardRef], prefixes: tuple[str, ...], *, bottleneck: str = "unknown",
                  support: tuple[str, ...] = (), by_score: bool = False) -> tuple[CardRef | None, bool, str]:
    """Test (2): is the next change narrowed to ONE evidence-backed family? Returns (card, passed, notes).

    Eligible: the recipe applies (or, for an LLM proposer, is not ruled out), the card matches evidence of this
    level (``prefixes``), and its family is not spent on this base. Ranking: families not yet tried on this base
    first, then (``by_score``) the quick-match score with a bonus for naming ``bottleneck``, or the count of level
    evidence (plus ``support`` tokens) then that weighted score. The card is returned even when test (2) fails
    (a tie), so that a level can still report its best-supported family.
    """
    if ctx.require_recipe:
        eligible = [r for r in refs if r.applicable]
        why_none = "no matched card has a recipe that applies to this candidate"
    else:
        eligible = [r for r in refs if r.applicable is not False]
        why_none = "no matched card"
    tries = nonimproving_tries(ctx)
    set_aside = [r.id for r in eligible if spent(r, tries.get(r.id, 0))]
    eligible = [r for r in eligible if relevant(r, prefixes) and r.id not in set_aside]
    aside = f" ({', '.join(set_aside)} set aside: did not improve)" if set_aside else ""
    if not eligible:
        return None, False, why_none + f" with {'/'.join(p.rstrip(':') for p in prefixes)} evidence" + aside

    def weight(r: CardRef) -> float:
        return r.score * (
            1 + _AGREE_BONUS * (bottleneck != "unknown" and f"bottleneck:{bottleneck}" in r.matched_symptoms)
        )

    def count(r: CardRef) -> int:
        return len(relevant(r, prefixes + support))

    eligible.sort(
        key=lambda r: (
            (tries.get(r.id, 0), -weight(r), -count(r)) if by_score else (tries.get(r.id, 0), -count(r), -weight(r))
        )
    )
    top = eligible[0]
    if len(eligible) == 1:
        return top, True, f"only {top.id} is eligible" + aside
    second = eligible[1]
    t1, t2 = tries.get(top.id, 0), tries.get(second.id, 0)
    n1, n2, w1, w2 = count(top), count(second), weight(top), weight(second)
    if t1 < t2:
        return top, True, f"{top.id} is untried on this base; {second.id} did not improve {t2}x" + aside
    if not by_score and n1 > n2:
        return top, True, f"{top.id} matches {n1} evidence symptoms, next best {second.id} {n2}" + aside
    if w1 >= _MARGIN * w2:
        return top, True, f"{top.id} leads {second.id} on weighted score {w1:.4f} vs {w2:.4f}" + aside
    return (
        top,
        False,
        f"{top.id} and {second.id} are equally supported ({n1}/{n2} symptoms, weighted scores {w1:.4f}/{w2:.4f})"
        + aside,
    )
