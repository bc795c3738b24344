"""L1 pattern triage: quick-match the KB with what is already known, open only the 1-2 best cards.

What is known at L1: the candidate's code features (source + recorded launches + problem cases) and earlier
rounds (a bottleneck class measured at L2 or attributed at L3/L4, IR signatures seen before, families that
already failed). L1 may stop when a low-risk rewrite is justified:

1. localized: a bottleneck class is known from earlier evidence (code features alone never localize one, so
   the first round always escalates to measurement);
2. single family: ``choose_family`` over code / bottleneck / IR tokens, ranked by quick-match score with a bonus
   for naming the known class (not a filter); families that did not improve on this base are tried last and
   set aside after two tries (or one with no untried recipe point);
3. justified: the chosen card names the known class, its pattern is present in the code (a specific code
   feature matches) and its recipe applies to this source.
"""

from __future__ import annotations

from kb.models import EscalationTests, EvidenceItem, Symptoms
from kb.vocab import CAUSE_CLASS
from optimizer.features import extract_features
from optimizer.ladder import keys
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.causes import code_findings
from optimizer.ladder.select import (
    GENERIC_TOKENS,
    choose_family,
    match_cards,
    nonimproving_tries,
    relevant,
)
from optimizer.ladder.types import LadderContext, LevelResult

__all__ = ["TriageLevel"]


def _specific(codes: list[str]) -> list[str]:
    return [c for c in codes if c not in GENERIC_TOKENS]


def _row_bytes(ev: object) -> float | None:
    """Bytes of one row of a row-per-program launch: its BLOCK constexpr x the first pointer's element size."""
    sizes = {"fp32": 4, "fp16": 2, "bf16": 2, "i32": 4, "i64": 8, "fp64": 8, "i8": 1, "u8": 1}
    for rec in getattr(ev, "launches", None) or []:
        blocks = [v for k, v in (rec.get("constexprs") or {}).items() if "BLOCK" in k.upper() and isinstance(v, int)]
        ptrs = [t[1:] for t in (rec.get("signature") or {}).values() if t.startswith("*")]
        if blocks and ptrs:
            return float(max(blocks) * sizes.get(ptrs[0], 4))
    return None


class TriageLevel:
    level = "L1"

    def run(self, ctx: LadderContext) -> LevelResult:
        ev = ctx.evaluation
        cases = ctx.problem.cases_for(ctx.backend)
        feats = extract_features(ctx.source, launches=ev.launches if ev else [], cases=cases,
                                 input_dtypes=ctx.cache.get(keys.INPUT_DTYPES), torch_ops=ev.torch_compute_ops if ev else None)
        ctx.cache[keys.FEATURES] = feats
        known, known_from = ctx.known_bottleneck()
        sigs = ctx.known_signatures()
        symptoms = Symptoms(code_features=feats.tokens, bottleneck_classes=[known] if known != "unknown" else [],
                            ir_signatures=[s for s in sigs])  # type: ignore[list-item]
        text = f"{ctx.problem.name} kernels {' '.join(feats.kernels)}: {feats.text()}"
        refs = match_cards(ctx, symptoms, text, bottleneck=known)
        failures = {k: v for k, v in nonimproving_tries(ctx).items() if v}
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
                                         summary="families that did not improve on this base: " + ", ".join(f"{k} x{v}" for k, v in sorted(failures.items())),
                                         data={"not_improved": failures}))
        chosen, single, note = choose_family(ctx, refs, ("code:", "bottleneck:", "ir:"), bottleneck=known, by_score=True)
        code_hits = _specific(relevant(chosen, ("code:",))) if chosen else []
        localized = known != "unknown"
        why_loc = (f"bottleneck {known} known from {known_from}" if localized
                   else "no bottleneck known yet from measurement or IR (code features alone do not localize one)")
        agrees = bool(chosen) and localized and f"bottleneck:{known}" in chosen.matched_symptoms  # type: ignore[union-attr]
        justified = agrees and len(code_hits) >= 1
        if justified and chosen:
            why_just = f"{chosen.id} addresses {known} and its pattern is in the code ({', '.join(code_hits)}); {chosen.applicability_note}"
        elif chosen and not localized:
            why_just = f"{chosen.id} ranks first, but no bottleneck is known to justify it"
        elif chosen:
            why_just = (f"{chosen.id} does not name the known bottleneck {known}" if not agrees
                        else f"{chosen.id} names {known} but no specific code feature of it is in the code")
        else:
            why_just = "no eligible card both addresses a known bottleneck and matches the code"
        tests = EscalationTests(localized=localized, single_family=single, justified=justified,
                                notes=f"(1) {why_loc}; (2) {note}; (3) {why_just}")
        evidence.append(EvidenceItem(level="L1", kind="bottleneck", reference=known, summary=why_loc,
                                     data={"class": known, "localized": localized, "source": "history"}))
        case = ctx.cache.get(keys.LAUNCH_CASE) or (cases[0] if cases else {})
        findings = code_findings(feats, ev.launches if ev else [], hot_kernel=ctx.cache.get(keys.HOT_KERNEL), row_bytes=_row_bytes(ev),
                                 case_bytes=ctx.problem.bytes_moved(case) if case else None)
        # L1 may stop on a cause only when an earlier round measured this kernel (code alone never localizes)
        step = causal_step(ctx, "L1", findings, may_stop=localized and known_from.startswith("round"))
        evidence.append(step.evidence("L1"))
        tests, chosen_final, best = merge_tests(step, tests, chosen if single else None, chosen if justified else None)
        cls = known if known != "unknown" else CAUSE_CLASS.get(step.decision.cause, "unknown") if tests.passed else known
        refs_out = ([step.family] if step.family else []) + [r for r in refs if not step.family or r.id != step.family.id]
        return LevelResult(level="L1", evidence=evidence, bottleneck=cls, matched_cards=refs_out[:2],  # type: ignore[arg-type]
                           tests=tests, chosen=chosen_final, best=best, inconclusive=not refs and not findings,
                           rationale=tests.notes, data={"bottleneck_source": "history", "features": feats.tokens},
                           findings=findings, decision=step.decision)

