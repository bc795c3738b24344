"""L1 pattern triage: quick-match the KB with what is already known, open only the 1-2 best cards.

What is known at L1: the candidate's code features (source + recorded launches + problem cases) and earlier
rounds (a bottleneck class measured before, IR signatures seen before, families that already failed). L1 may
stop when a low-risk rewrite is justified:

1. localized: a bottleneck class is known from earlier measured evidence, or the best card matches at least
   two specific code features and names the class it addresses (localization by pattern);
2. single family: ``choose_family`` over code / bottleneck / IR tokens;
3. justified: the chosen card matches >= 2 code features (or the known class), its recipe applies to this
   source, and its family has not failed or regressed twice already in this session.
"""

from __future__ import annotations

from kb.models import EscalationTests, EvidenceItem, Symptoms
from optimizer.features import extract_features
from optimizer.ladder.select import GENERIC_TOKENS, choose_family, match_cards, relevant
from optimizer.ladder.types import LadderContext, LevelResult

__all__ = ["TriageLevel"]


def _specific(codes: list[str]) -> list[str]:
    return [c for c in codes if c not in GENERIC_TOKENS]


class TriageLevel:
    level = "L1"

    def run(self, ctx: LadderContext) -> LevelResult:
        ev = ctx.evaluation
        cases = ctx.problem.cases_for(ctx.backend)
        feats = extract_features(ctx.source, launches=ev.launches if ev else [], cases=cases,
                                 input_dtypes=ctx.cache.get("input_dtypes"), torch_ops=ev.torch_compute_ops if ev else None)
        ctx.cache["features"] = feats
        known, known_from = ctx.known_bottleneck()
        sigs = ctx.known_signatures()
        symptoms = Symptoms(code_features=feats.tokens, bottleneck_classes=[known] if known != "unknown" else [],
                            ir_signatures=[s for s in sigs])  # type: ignore[list-item]
        text = f"{ctx.problem.name} kernels {' '.join(feats.kernels)}: {feats.text()}"
        refs = match_cards(ctx, symptoms, text, bottleneck=known)
        failures = _failed_families(ctx)
        evidence = [
            EvidenceItem(level="L1", kind="code_features", reference=ctx.candidate.name,
                         summary=f"{len(feats.tokens)} code features: {', '.join(feats.tokens)}", data={"features": feats.tokens}),
            EvidenceItem(level="L1", kind="quick_match", reference=",".join(r.id for r in refs[:2]),
                         summary="; ".join(f"{r.id} ({r.score:.3f}, {len(r.matched_symptoms)} symptoms"
                                           + (", recipe applies" if r.applicable else f", {r.applicability_note}" if r.applicability_note else "") + ")"
                                           for r in refs[:3]) or "no pattern card matched",
                         data={"cards": [r.model_dump() for r in refs[:3]]}),
        ]
        if known != "unknown":
            evidence.append(EvidenceItem(level="L1", kind="history", reference=known_from,
                                         summary=f"bottleneck {known} measured in {known_from}"))
        if failures:
            evidence.append(EvidenceItem(level="L1", kind="history", reference=",".join(sorted(failures)),
                                         summary="families that failed or regressed earlier: " + ", ".join(f"{k} x{v}" for k, v in sorted(failures.items()))))
        chosen, single, note = choose_family(ctx, refs, ("code:", "bottleneck:", "ir:"))
        code_hits = _specific(relevant(chosen, ("code:",))) if chosen else []
        bottleneck, source = known, "measured"
        if known != "unknown":
            localized = True
            why_loc = f"bottleneck {known} known from {known_from}"
        elif chosen and len(code_hits) >= 2 and chosen.bottleneck_classes:
            localized, bottleneck, source = True, chosen.bottleneck_classes[0], "pattern"  # type: ignore[assignment]
            why_loc = f"code pattern {', '.join(code_hits)} localizes {bottleneck} (by pattern, not measured)"
        else:
            localized, why_loc = False, "no measured bottleneck yet and no card matches two specific code features"
        justified = bool(chosen) and (len(code_hits) >= 2 or (known != "unknown" and f"bottleneck:{known}" in chosen.matched_symptoms)) \
            and failures.get(chosen.id, 0) < 2  # type: ignore[union-attr]
        why_just = (f"{chosen.id} matches {', '.join(code_hits) or 'the known class'}; " + (chosen.applicability_note or "")
                    if chosen and justified else "no low-risk rewrite is justified from code features alone")
        if chosen and failures.get(chosen.id, 0) >= 2:
            why_just = f"{chosen.id} already failed or regressed {failures[chosen.id]} times"
        tests = EscalationTests(localized=localized, single_family=single, justified=justified,
                                notes=f"(1) {why_loc}; (2) {note}; (3) {why_just}")
        evidence.append(EvidenceItem(level="L1", kind="bottleneck", reference=bottleneck, summary=why_loc,
                                     data={"class": bottleneck, "localized": localized, "source": source}))
        return LevelResult(level="L1", evidence=evidence, bottleneck=bottleneck, matched_cards=refs[:2],  # type: ignore[arg-type]
                           tests=tests, chosen=chosen if single else None, inconclusive=not refs,
                           rationale=tests.notes, data={"bottleneck_source": source, "features": feats.tokens})


def _failed_families(ctx: LadderContext) -> dict[str, int]:
    out: dict[str, int] = {}
    for rnd in ctx.history:
        if rnd.rewrite is not None and rnd.outcome in ("failed", "regressed"):
            out[rnd.rewrite.family] = out.get(rnd.rewrite.family, 0) + 1
    return out
