"""Stage 4, judge: the chosen point evaluated against the initial candidate and the round's base, and its verdict.
In: :class:`Screened`; out: :class:`Judged`.

The verdict is ``optimizer.harness.verdict.judge`` on the interval of the geomean speedup over the base (it must clear
``max(noise floor, improvement_threshold)``); the rule is written into the timing. On CUDA with ``ncu_account`` the
judgement also measures whether the rewrite removed what its decided cause names (``Round.target``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.models import EvidenceItem, Timing
from kb.models.trajectory import Outcome, TargetEffect
from kb.vocab import Level
from optimizer.harness import stages, verdict
from optimizer.harness.evaluation import Evaluation
from optimizer.round.context import RoundSetup
from optimizer.round.screen import Screened

__all__ = ["Judged", "judge", "validation_evidence", "verdict_of"]


@dataclass(frozen=True)
class Judged:
    """The round's evaluation and timing, its outcome with the advice that follows, and the target's effect."""

    screened: Screened
    evaluation: Evaluation
    timing: Timing
    outcome: Outcome
    advice: str
    target: TargetEffect | None


def judge(setup: RoundSetup, s: Screened) -> Judged:
    d = s.diagnosed
    base_path = d.base.path
    against = {"initial": setup.initial or base_path} | ({"base": base_path} if base_path != setup.initial else {})
    with stages.span("evaluate"):
        ev = setup.evaluate(s.path, against=against, methods=setup.methods)
    d.clock.merge(ev.phase_s)
    timing = setup.timing(ev, d.base.baseline_ms)
    result, advice = verdict_of(setup, ev, timing, s.proposal.family)
    target = None
    stop = d.outcome.stop
    if (setup.backend == "cuda" and setup.settings.ncu_account and ev.validation is not None
            and ev.validation.passed and stop is not None and stop.cause not in ("unknown", "at_roofline")):
        from optimizer.ladder.measured_account import round_target

        with stages.span("target"):  # did the rewrite remove what its cause names?
            target = round_target(d.ctx, s.path, stop.cause)
    return Judged(screened=s, evaluation=ev, timing=timing, outcome=result, advice=advice, target=target)


def verdict_of(setup: RoundSetup, ev: Evaluation, timing: Timing, family: str) -> tuple[Outcome, str]:
    """The outcome and its advice; the rule is written into ``timing.verdict``."""
    if not ev.passed:
        return "failed", f"{family} produced an invalid candidate ({ev.failure_kind}): {ev.reason[:300]}"
    g, vb, floor = timing.geomean_speedup, timing.vs_base, setup.floor
    if g is None or vb is None or floor is None:
        timing.verdict = "neutral: no interval (timing unavailable on this backend or no A/A noise floor)"
        return "neutral", ("validated; timing unavailable on this backend, so it cannot be ranked "
                           "(the best round stays the earliest validated one)")
    thr = setup.settings.improvement_threshold
    result = verdict.judge(vb, floor, thr)
    span = f"{vb.point:.3f}x over the base, 95% [{vb.lo:.3f}, {vb.hi:.3f}]"
    timing.verdict = f"{result}: {span}; " + verdict.rule_text(floor, thr)
    if result == "improved":
        return result, f"{g:.3f}x vs initial ({span}): continue from this candidate"
    if result == "regressed":
        return result, f"{span} is below the noise margin: keep the base, try another point or family"
    return result, f"{span} does not clear the margin {max(floor, thr):.2%}: not distinguishable from the base"


def validation_evidence(ev: Evaluation, level: Level) -> EvidenceItem:
    """A candidate's validation as evidence: per case its max relative error, or why it failed."""
    v = ev.validation
    summary = ("validated: " + ", ".join(f"{c.case} max_rel {c.max_rel_err or 0:.2g}" for c in v.cases) if v.passed
               else f"failed ({ev.failure_kind}): {ev.reason[:400]}")
    return EvidenceItem(level=level, kind="validation", reference=ev.candidate.name, summary=summary,
                        data={"status": ev.status, "hack_flags": v.hack_flags, "launches": ev.launches[:4]})
