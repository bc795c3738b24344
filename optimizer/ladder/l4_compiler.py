"""L4 compiler-source escalation: turn the IR symptom into a narrow compiler question.

Uses the IR engine's ``explain`` (invariant cards through the KB client, filled question templates, and the
installed backend's pipeline source or a compiler checkout when no card settles the question). The output
is why the pattern blocks the optimization (the pass and its condition) and what a rewrite must satisfy.

Tests: (1) at least one implicated signature is localized to a pass with a condition (card legality or
compiler-source location); (2) the invariant cards point (``related``) to ONE applicable pattern family,
preferring one L3 also matched; (3) that family's invariant is settled (legality stated) or grounded in
source, and the family's card cites the same signature or invariant.
"""

from __future__ import annotations

from kb.errors import LadderError, NotFound
from kb.models import EscalationTests, EvidenceItem
from kb.models.cards import InvariantCard, PatternCard
from kb.vocab import Level
from optimizer.ir import SIGNATURE_CLASS
from optimizer.ladder.causal import causal_step, merge_tests
from optimizer.ladder.select import nonimproving_tries, recipe_context, spent
from optimizer.ladder.types import CardRef, LadderContext, LevelResult
from optimizer.rewrite.recipe import can_apply

__all__ = ["CompilerLevel"]


#: Invariant-card text (condition, constraints, questions) the KB holds and the summary paraphrases: the trajectory
#: keeps the card ids, pass, stage and source lines, not a copy of the card per round (a copy per round made up a
#: fifth of a trajectory's size).
_KB_TEXT = {"condition", "constraints", "questions", "account"}


class CompilerLevel:
    level: Level = "L4"

    def run(self, ctx: LadderContext) -> LevelResult:
        try:
            report = ctx.ir_report()
            from optimizer.ir import explain

            l3 = ctx.previous("L3")
            focus = (l3.data.get("signatures") if l3 else None) or [
                s.name for s in report.signatures if s.name in SIGNATURE_CLASS
            ]
            account = explain(report, ctx.kb, focus=focus or None, compiler_source=ctx.settings.compiler_source)
        except (LadderError, OSError) as exc:  # the capture (its worker's failures arrive as ToolchainError /
            # InvalidArgument) and explain's KB reads: each, a KB ``Unavailable`` included, becomes an inconclusive L4
            # that names it (type and message); anything else is a bug, recorded with an error id by the engine
            reason = f"L4 could not run: {type(exc).__name__}: {exc}"[:600]
            return LevelResult(
                level="L4",
                tests=EscalationTests(localized=False, single_family=False, justified=False, notes=f"(1) {reason}"),
                inconclusive=True,
                rationale=reason,
                evidence=[EvidenceItem(level="L4", kind="invariant", summary=reason)],
            )
        evidence: list[EvidenceItem] = []
        for f in account.findings:
            evidence.append(
                EvidenceItem(
                    level="L4",
                    kind="invariant" if f.cards else "compiler_source",
                    reference=",".join(f.cards) or (f.source_refs[0].path if f.source_refs else f.signature),
                    summary=f.account[:1500],
                    data=f.model_dump(mode="json", exclude=_KB_TEXT),
                )
            )
        localized_f = [f for f in account.findings if f.pass_name and (f.condition or f.source_refs)]
        families = self._families(ctx, account.findings)
        l3 = ctx.previous("L3")
        l3_ids = {c.id for c in l3.matched_cards} if l3 else set()
        tries = nonimproving_tries(ctx)
        eligible = [c for c in families if (c.applicable or (not ctx.require_recipe and c.applicable is not False))
                    and not spent(c, tries.get(c.id, 0))]
        eligible.sort(
            key=lambda c: (tries.get(c.id, 0), c.id not in l3_ids, -c.score)
        )  # untried, then also matched at L3
        chosen, best = None, eligible[0] if eligible else None
        if len(eligible) == 1:
            chosen, note = eligible[0], f"invariants point to one family: {eligible[0].id}"
        elif eligible:
            preferred = [c for c in eligible if c.id in l3_ids]
            if len(preferred) == 1:
                chosen, note = preferred[0], f"{preferred[0].id} is the one related family L3 also matched"
            else:
                note = f"invariants relate {len(eligible)} applicable families ({', '.join(c.id for c in eligible)})"
        else:
            note = "no applicable pattern family is related to the implicated invariants"
        justified = False
        if chosen is not None:
            hit = next(
                (f for f in account.findings if any(f"invariant:{cid}" in chosen.matched_symptoms for cid in f.cards)),
                None,
            )
            justified = (
                hit is not None and (hit.settled or bool(hit.source_refs)) and bool(hit.constraints or hit.condition)
            )
        sig = localized_f[0].signature if localized_f else None
        cls = SIGNATURE_CLASS.get(sig or "", "unknown")
        why_loc = (
            f"{sig} localized to pass {localized_f[0].pass_name}: {localized_f[0].condition[:200]}"
            if localized_f
            else "no implicated signature was localized to a pass with a condition"
        )
        tests = EscalationTests(
            localized=bool(localized_f),
            single_family=chosen is not None,
            justified=justified,
            notes=f"(1) {why_loc}; (2) {note}; (3) "
            + (
                "condition and constraints stated for the chosen family"
                if justified
                else "the family is not backed by a settled or source-grounded condition"
            ),
        )
        evidence.append(EvidenceItem(level="L4", kind="bottleneck", reference=cls, summary=account.summary,
                                     data={"class": cls, "localized": bool(localized_f), "source": "compiler"}))
        constraints = [c for f in account.findings for c in f.constraints]
        step = causal_step(ctx, "L4", [])
        evidence.append(step.evidence("L4"))
        tests, chosen, best = merge_tests(step, tests, chosen, chosen or best)
        return LevelResult(
            level="L4",
            evidence=evidence,
            bottleneck=cls,
            matched_cards=families[:2],
            tests=tests,
            chosen=chosen,
            best=best,
            inconclusive=not account.findings and not step.decision.decided,
            rationale=tests.notes,
            decision=step.decision,
            data={
                "summary": account.summary,
                "constraints": constraints,
                "unresolved": account.unresolved,
                "questions": [q.question for f in account.findings for q in f.questions],
                "bottleneck_source": "compiler",
            },
        )

    def _families(self, ctx: LadderContext, findings: list) -> list[CardRef]:
        """Pattern cards related to the implicated invariant cards, dry-run against the candidate."""
        out: dict[str, CardRef] = {}
        for f in findings:
            for cid in f.cards:
                try:
                    inv = ctx.kb.get_card(cid)
                except NotFound:  # cited by the IR engine but not served by this KB; any other KB error propagates
                    continue
                if not isinstance(inv, InvariantCard):
                    continue
                for rid in inv.related:
                    if rid in ctx.exclude_cards:
                        continue
                    try:
                        card = ctx.kb.get_card(rid)
                    except NotFound:  # a related family this KB does not hold; Unavailable is not "no family"
                        continue
                    if not isinstance(card, PatternCard) or card.status != "active":
                        continue
                    ref = out.get(rid) or CardRef(
                        id=card.id,
                        kind=card.kind,
                        title=card.title,
                        summary=card.summary,
                        recipe=card.rewrite.recipe.model_dump() if card.rewrite and card.rewrite.recipe else None,
                        rewrite=card.rewrite.description if card.rewrite else "",
                        bottleneck_classes=list(card.symptoms.bottleneck_classes),
                        ir_signatures=list(card.symptoms.ir_signatures),
                        related=list(card.related),
                    )
                    ref.matched_symptoms = sorted(
                        set(ref.matched_symptoms)
                        | {f"invariant:{inv.id}"}
                        | ({f"ir:{f.signature}"} if f.signature in card.symptoms.ir_signatures else set())
                    )
                    ref.score = len(ref.matched_symptoms)
                    out[rid] = ref
        refs = sorted(out.values(), key=lambda r: -r.score)
        for r in refs:
            if r.recipe is not None:
                r.applicable, r.applicability_note = can_apply(r.recipe, recipe_context(ctx, r.id))
            else:
                r.applicable, r.applicability_note = None, "no machine-applicable recipe"
        return refs
