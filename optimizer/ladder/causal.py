"""The causal half of each level: gather findings so far, decide, and pick the family that removes the cause.

``causal_step`` is what every level calls after computing its own findings. When the decision names a cause,
the family is the first card of ``kb.vocab.CAUSE_FAMILIES[cause]`` that is active in the KB, not excluded or
spent on this base, and whose recipe accepts this kernel (its domain and applier). Every refused family is
recorded with its reason: the refusal is evidence too. When every family of the decided cause refuses, the next
structural cause (``decide.fall_back``) whose family applies takes over and the record names the cause it replaced.
A contradiction (two causes tied, different rewrites) escalates; at L4, with nothing left to escalate to, the first of
the tied causes whose family applies is acted on (``decide.break_tie``). At-the-roofline needs no family: it is a stop.
"""

from __future__ import annotations

from kb.errors import LadderError
from kb.models import EscalationTests, EvidenceItem
from kb.models.cards import PatternCard
from kb.vocab import CAUSE_CLASS, Level
from optimizer.ladder import keys
from optimizer.ladder.causes.account import account_view
from optimizer.ladder.decide import Decision, break_tie, decide, fall_back
from optimizer.ladder.findings import Finding
from optimizer.ladder.select import GENERIC_TOKENS, nonimproving_tries, recipe_context, spent
from optimizer.ladder.types import CardRef, LadderContext
from optimizer.rewrite.recipe import can_apply

__all__ = ["CausalStep", "all_findings", "causal_step", "evidence_tokens", "merge_tests"]


class CausalStep:
    def __init__(self, decision: Decision, family: CardRef | None, refusals: list[str], tests: EscalationTests | None,
                 level: str = ""):
        self.decision, self.family, self.refusals, self.tests, self.level = decision, family, refusals, tests, level
        #: what the decision must not act against (``gap_account.idle_sm_notes``: idle SMs the largest static share)
        self.notes: list[str] = []

    def evidence(self, level: Level) -> EvidenceItem:
        d = self.decision
        data = d.model_dump(mode="json") | {
            "family": self.family.id if self.family else None,
            "refusals": self.refusals,
        } | ({"idle_sms": self.notes} if self.notes else {})
        return EvidenceItem(level=level, kind="cause_decision", reference=d.cause,
                            summary=(d.summary() + (f"; family {self.family.id}" if self.family else "")
                                     + (f"; refused: {'; '.join(self.refusals[:3])}" if self.refusals else "")
                                     + (f"; static account: {self.notes[0]}" if self.notes else ""))[:2000],
                            data=data)


def evidence_tokens(ctx: LadderContext, findings: list[Finding] | None = None) -> list[str]:
    """code:/ir:/cause: tokens known so far (the recipe domain check reads them)."""
    feats = ctx.cache.get(keys.FEATURES)
    toks = [f"code:{t}" for t in (feats.tokens if feats else [])]
    toks += [f"ir:{s}" for s in ctx.known_signatures()]
    for f in all_findings(ctx) + list(findings or []):
        if f.confidence >= 0.5:
            toks.append(f"cause:{f.cause}")
    return sorted(set(toks))


def all_findings(ctx: LadderContext) -> list[Finding]:
    return [f for r in ctx.results for f in r.findings]


def _measured(ctx: LadderContext) -> tuple[str, bool]:
    l2 = ctx.previous("L2")
    if l2 is not None and l2.data.get("per_case"):
        return (l2.bottleneck if l2.tests.localized else "unknown"), True
    known, source = ctx.known_bottleneck()  # measured in an earlier round on this session
    if known != "unknown" and source.startswith("round"):
        return known, True
    return "unknown", False


def _family(ctx: LadderContext, d: Decision, tokens: list[str]) -> tuple[CardRef | None, list[str]]:
    refusals: list[str] = []
    usable_refs: list[CardRef] = []
    tries = nonimproving_tries(ctx)
    bottleneck = CAUSE_CLASS.get(d.cause, "unknown")
    for fid in d.families:
        if fid in ctx.exclude_cards:
            refusals.append(f"{fid}: set aside in this session")
            continue
        try:
            card = ctx.kb.get_card(fid)
        except LadderError as exc:  # KB errors (missing card, unavailable) are recorded, never guessed around
            refusals.append(f"{fid}: not in the KB ({type(exc).__name__})")
            continue
        if not isinstance(card, PatternCard) or card.status != "active":
            refusals.append(f"{fid}: not an active pattern card")
            continue
        recipe = card.rewrite.recipe.model_dump() if card.rewrite and card.rewrite.recipe else None
        ref = CardRef(
            id=card.id,
            kind=card.kind,
            title=card.title,
            summary=card.summary,
            score=d.confidence,
            matched_symptoms=[f"cause:{d.cause}"],
            recipe=recipe,
            rewrite=card.rewrite.description if card.rewrite else "",
            bottleneck_classes=list(card.symptoms.bottleneck_classes),
            ir_signatures=list(card.symptoms.ir_signatures),
            related=list(card.related),
        )
        if recipe is not None:
            rctx = recipe_context(ctx, fid, bottleneck)
            rctx.evidence = sorted(set(rctx.evidence) | set(tokens))
            ok, note = can_apply(recipe, rctx)
            ref.applicable, ref.applicability_note = ok, note
        else:
            ref.applicable, ref.applicability_note = None, "no machine-applicable recipe"
        usable = ref.applicable or (not ctx.require_recipe and ref.applicable is not False)
        if not usable:
            refusals.append(f"{fid}: {ref.applicability_note}")
            continue
        if spent(ref, tries.get(fid, 0)):
            refusals.append(f"{fid}: did not improve on this base")
            continue
        code = {t.removeprefix("code:") for t in tokens if t.startswith("code:")}
        ref.matched_symptoms += sorted(f"code:{t}" for t in set(card.symptoms.code_features) & code
                                       if f"code:{t}" not in GENERIC_TOKENS and t != "masked_load")
        usable_refs.append(ref)
    if not usable_refs:
        return None, refusals
    # the family whose card matches most of this kernel's code features (the most specific), canonical order on ties
    best = max(usable_refs, key=lambda r: (len(r.matched_symptoms), -usable_refs.index(r)))
    return best, refusals


def causal_step(ctx: LadderContext, level: str, findings: list[Finding], *, may_stop: bool = True,
                measured: tuple[str, bool] | None = None) -> CausalStep:
    """Decide over all findings so far plus this level's; tests are None when the decision cannot stop here.
    ``measured``: (class, measured at all) when the caller is the measuring level itself (L2), else read from
    earlier levels and rounds."""
    measured_cls, measured_any = measured or _measured(ctx)
    account = account_view(ctx.cache.get(keys.account(ctx.source_sha)))
    d = decide(all_findings(ctx) + findings, measured=measured_cls, measured_any=measured_any, account=account)
    if not d.decided and d.contradiction and level == "L4" and may_stop:  # nothing left to escalate to
        tokens = evidence_tokens(ctx, findings)
        tie_refusals: list[str] = []
        for alt in break_tie(d, all_findings(ctx) + findings):
            fam, refusals = _family(ctx, alt, tokens)
            tie_refusals += refusals
            if fam is not None:
                return _stop(alt, fam, tie_refusals, level)
    if not d.decided:
        return CausalStep(d, None, [], None, level)
    if d.cause == "at_roofline":
        fig = d.decided_by[0].detail if d.decided_by else ""
        tests = EscalationTests(
            localized=True,
            single_family=True,
            justified=True,
            notes=f"(1) at the roofline: nothing to gain here ({fig}); (2) no rewrite needed; (3) measured",
        )
        return CausalStep(d, None, [], tests if may_stop else None, level)
    tokens = evidence_tokens(ctx, findings)
    fam, refusals = _family(ctx, d, tokens)
    if (
        fam is None and refusals
    ):  # the decided cause stays whatever we do: the next structural cause that can be removed
        for alt in fall_back(d, all_findings(ctx) + findings, "; ".join(refusals)):
            alt_fam, alt_refusals = _family(ctx, alt, tokens)
            if alt_fam is not None:
                d, fam, refusals = alt, alt_fam, [*refusals, *alt_refusals]
                break
    if not may_stop:
        return CausalStep(d, fam, refusals, None, level)
    if fam is None:  # no family removes the cause here: the refusals are recorded, the class tests may not stop
        return CausalStep(d, None, refusals, None, level)
    return _stop(d, fam, refusals, level)


def _stop(d: Decision, fam: CardRef, refusals: list[str], level: str) -> CausalStep:
    """The stop of a decided cause with the family that removes it: the escalation tests say what decided."""
    by = "; ".join(r.label() for r in d.decided_by[:3])
    justified = d.structural or any(r.kind in ("counter", "roofline", "timing") for r in d.decided_by)
    over = f"; overruled: {'; '.join(d.overruled[:2])}" if d.overruled else ""
    tests = EscalationTests(
        localized=True,
        single_family=True,
        justified=justified,
        notes=f"(1) cause {d.cause} ({d.confidence:.2f}{', static only' if d.static_only else ''}) from {by}"
        f"{over}; (2) {fam.id} removes {d.cause}"
        + (f" ({'; '.join(refusals)} refused)" if refusals else "")
        + f"; (3) {'tied to source lines / IR' if d.structural else 'measured'}: {fam.applicability_note[:160]}",
    )
    return CausalStep(d, fam, refusals, tests, level)


def merge_tests(step: CausalStep, tests: EscalationTests, chosen: CardRef | None, best: CardRef | None
                ) -> tuple[EscalationTests, CardRef | None, CardRef | None]:
    """The level's final (tests, chosen, best): a cause decision replaces the class-based tests; at L1/L2 cause
    findings that are still undecided forbid a class-only stop (escalate); at L3/L4 the signature-tied tests stand
    unless the causes contradict each other; with no cause finding the class tests stand."""
    if step.tests is not None:
        return step.tests, (step.family if step.tests.passed else None), step.family or best
    if step.level in ("L3", "L4") and not step.decision.contradiction:
        if step.decision.decided and step.refusals:  # say plainly that the class-based family leaves the cause in place
            tests = tests.model_copy(
                update={
                    "notes": f"{tests.notes}; cause {step.decision.cause} decided but every family "
                    f"that removes it refused this kernel ({'; '.join(step.refusals[:2])[:300]}): "
                    "the class-based family does not remove the cause"
                }
            )
        return (
            tests,
            chosen,
            best,
        )  # an IR signature tied to source lines may decide on its own; a contradiction may not
    if step.decision.ranking:
        why = step.decision.summary()
        return (
            EscalationTests(
                localized=tests.localized,
                single_family=tests.single_family,
                justified=False,
                notes=f"{tests.notes}; cause: {why} -> escalate (no class-only stop while cause findings are open)",
            ),
            None,
            step.family or best,
        )
    return tests, chosen, best
