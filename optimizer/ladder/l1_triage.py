"""L1 pattern triage: quick-match the KB with what is already known, open only the 1-2 best cards.

What is known at L1: the candidate's code features (source + recorded launches + problem cases) and earlier
rounds (a bottleneck class measured at L2 or attributed at L3/L4, IR signatures seen before, families that
already failed). L1 may stop when a low-risk rewrite is justified:

1. localized: a bottleneck class is known from earlier evidence (code features alone never localize one, so
   the first round always escalates to measurement);
2. single family: ``choose_family`` over code / bottleneck / IR tokens, among cards that address that class;
3. justified: the chosen card names the known class, its pattern is present in the code (a specific code
   feature matches), its recipe applies to this source, and its family has not failed or regressed twice.
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
        pool = [r for r in refs if f"bottleneck:{known}" in r.matched_symptoms] if known != "unknown" else refs
        chosen, single, note = choose_family(ctx, pool, ("code:", "bottleneck:", "ir:"))
        code_hits = _specific(relevant(chosen, ("code:",))) if chosen else []
        localized = known != "unknown"
        why_loc = (f"bottleneck {known} known from {known_from}" if localized
                   else "no bottleneck known yet from measurement or IR (code features alone do not localize one)")
        justified = (bool(chosen) and localized and f"bottleneck:{known}" in chosen.matched_symptoms  # type: ignore[union-attr]
                     and len(code_hits) >= 1 and failures.get(chosen.id, 0) < 2)  # type: ignore[union-attr]
        if justified and chosen:
            why_just = f"{chosen.id} addresses {known} and its pattern is in the code ({', '.join(code_hits)}); {chosen.applicability_note}"
        elif chosen and failures.get(chosen.id, 0) >= 2:
            why_just = f"{chosen.id} already failed or regressed {failures[chosen.id]} times"
        else:
            why_just = "no card both addresses a known bottleneck and matches the code"
        tests = EscalationTests(localized=localized, single_family=single, justified=justified,
                                notes=f"(1) {why_loc}; (2) {note}; (3) {why_just}")
        evidence.append(EvidenceItem(level="L1", kind="bottleneck", reference=known, summary=why_loc,
                                     data={"class": known, "localized": localized, "source": "history"}))
        return LevelResult(level="L1", evidence=evidence, bottleneck=known, matched_cards=(pool or refs)[:2],  # type: ignore[arg-type]
                           tests=tests, chosen=chosen if single else None, inconclusive=not refs,
                           rationale=tests.notes, data={"bottleneck_source": "history", "features": feats.tokens})


def _failed_families(ctx: LadderContext) -> dict[str, int]:
    out: dict[str, int] = {}
    for rnd in ctx.history:
        if rnd.rewrite is not None and rnd.outcome in ("failed", "regressed"):
            out[rnd.rewrite.family] = out.get(rnd.rewrite.family, 0) + 1
    return out
